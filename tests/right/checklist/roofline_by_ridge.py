"""Right, computed another way: the ridge point first, then the roof on the intensity's side of
it, the rate from that roof alone."""

NOTEBOOK, LABEL = "10_checklist", "ex-checklist-roofline"


def attainable(intensity, peak_tflops, bandwidth_gbps):
    ridge = peak_tflops * 1000.0 / bandwidth_gbps    # FLOP per byte where the roofs meet
    if intensity < ridge:
        return intensity * bandwidth_gbps * 1e-3, "memory"
    return float(peak_tflops), "compute"
