# Reads wsbench's HdrHistogram interval logs (`--hdr-dir`) into numpy arrays:
# one (values, counts) pair per tagged interval. The V2 encoding, decoded here
# from its published description (cookie, header, zig-zag LEB128 counts with
# negative runs of zeros), not from any library.
import base64, math, struct, zlib
import numpy as np

COMPRESSED = 0x1C849304
V2 = 0x1C849303


def _varints(buf):
    out = []
    i = 0
    n = len(buf)
    while i < n:
        shift = 0
        v = 0
        for k in range(9):
            b = buf[i]
            i += 1
            if k == 8:
                v |= b << shift
                break
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        out.append((v >> 1) ^ -(v & 1))
    return out


def decode(text):
    """One base64 histogram -> (lowest value of each bucket, count), nonzero only."""
    raw = base64.b64decode(text)
    cookie, length = struct.unpack(">II", raw[:8])
    assert cookie & ~0xF0 == COMPRESSED, hex(cookie)
    inner = zlib.decompress(raw[8 : 8 + length])
    cookie, payload, _offset, sig, lowest, _highest, _ratio = struct.unpack(">IIIIqqd", inner[:40])
    assert cookie & ~0xF0 == V2, hex(cookie)
    counts = _varints(inner[40 : 40 + payload])
    mag = int(math.ceil(math.log2(2 * 10**sig)))
    half_mag = mag - 1
    half = 1 << half_mag
    unit = int(math.floor(math.log2(lowest)))
    values, cs = [], []
    idx = 0
    for c in counts:
        if c < 0:
            idx += -c
            continue
        if c > 0:
            bucket = (idx >> half_mag) - 1
            sub = (idx & (half - 1)) + half
            if bucket < 0:
                sub -= half
                bucket = 0
            values.append(sub << (bucket + unit))
            cs.append(c)
        idx += 1
    return np.array(values, dtype=np.float64), np.array(cs, dtype=np.float64)


def read(path):
    """{tag: (values, counts)} of one log."""
    out = {}
    for line in open(path):
        if line.startswith("#") or line.startswith('"') or not line.strip():
            continue
        tag = None
        if line.startswith("Tag="):
            tag, line = line[4:].split(",", 1)
        fields = line.strip().split(",")
        out[tag] = decode(fields[3])
    return out


def quantile(values, counts, q):
    """The value at quantile q (the lowest value with cumulative count >= q * total)."""
    cum = np.cumsum(counts)
    i = int(np.searchsorted(cum, q * cum[-1]))
    return values[min(i, len(values) - 1)]
