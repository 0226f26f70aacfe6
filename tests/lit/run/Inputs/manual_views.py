"""Input and expected outputs of Inputs/manual-views.pto, from the hardware's view of the bytes
(worked by hand, not by the tools): x[r][c] = 16 r + c as f32 (exact sums).

usage: manual_views.py DIR  writes DIR/x.npy, DIR/reread.npy, DIR/inplace.npy, DIR/halves.npy"""
from npy_write import write_npy
import sys


def main():
    d = sys.argv[1]
    x = [[16 * r + c for c in range(16)] for r in range(16)]
    write_npy(d + "/x.npy", [v for row in x for v in row], [16, 16])
    # The column-major 16x1 tile holds row r's sum at byte 4 r: the 1x16 row-major tile on the
    # same bytes has it in column r.
    write_npy(d + "/reread.npy", [sum(x[r]) for r in range(16)], [1, 16])
    # b = a * k over a (k = 3), c = b + b over b: 6 x.
    write_npy(d + "/inplace.npy", [6 * v for row in x for v in row], [16, 16])
    # a's rows 8..15 are b's rows 0..7 (0x200 bytes = 8 rows of 64 bytes), i.e. x's rows 0..7.
    a = x[:8] + x[:8]
    write_npy(d + "/halves.npy", [a[r][c] + x[r][c] for r in range(16) for c in range(16)],
              [16, 16])


main()
