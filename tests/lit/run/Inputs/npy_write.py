"""The .npy writer the run tests' input scripts share (format version 1.0, little-endian)."""
import struct


def write_npy(path, values, shape, descr="<f4"):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % d for d in shape))
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    code = {"<f4": "f", "<i4": "i"}[descr]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), code), *values))
