"""Never caps the utilization at one: more banks than R + 1 deliver more than the bus."""
CHECKER = "check_channel_gbps"


def student(ratio, banks, bus_gbps):
    return bus_gbps * banks / (ratio + 1)
