"""Takes one bank's cycle as R transfer times, forgetting the transfer itself."""
CHECKER = "check_channel_gbps"


def student(ratio, banks, bus_gbps):
    return bus_gbps * min(1.0, banks / ratio) if ratio else bus_gbps
