"""NumPy reference for the example kernel (same function as the corpus ref.py).

``vadd_f32(a, b, n)`` returns ``{"c": c}`` with ``c[:n] = a[:n] + b[:n]`` in
float32 and the rest zero, as the kernel in vadd_f32.cl computes it
(harness: vadd_f32.json, bit-exact: rtol = atol = 0).
"""

import numpy as np


def vadd_f32(a, b, n, **_):
    c = np.zeros(a.shape[0], np.float32)
    c[:n] = a[:n] + b[:n]
    return {"c": c}
