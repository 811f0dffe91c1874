"""The backends, named as the CSV rows name them: ``pycuda`` (our kernels), ``numpy`` (the
references, the fallback without a GPU), ``torch`` (the ``torch`` and ``torch_compile``
peers). Each implements ``harness.contract.backend.Backend``."""
