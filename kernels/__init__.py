"""Built-in CUDA kernels (``<stage>.cu``) and shared headers (``common/*.cuh``).

Not Python: this file only lets a non-editable install ship the folder as
``harness.builtin_kernels``.
"""
