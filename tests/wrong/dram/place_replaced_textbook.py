"""Wrong (the package does the exercise): the chapter's TEXTBOOK layout, copied with
dataclasses.replace to the asked burst, channels and banks, answers through locate_element.
A method read off an object made at run time escapes the source check; the checker watches
DramLayout's methods while the answer runs (found by a reviewer playing a student)."""
import dataclasses

from gpuperf.kernels import dram as dr

CHECKER = "check_channel_bank"


def student(index, element_bytes, burst_bytes, channels, banks):
    layout = dataclasses.replace(dr.TEXTBOOK, burst_bytes=burst_bytes, channels=channels,
                                 banks_per_channel=banks)
    return layout.locate_element(index, element_bytes)
