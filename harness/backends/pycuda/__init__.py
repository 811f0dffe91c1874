"""The ``pycuda`` backend, a module per job: ``context`` (the only module creating a CUDA
context), ``runner`` (``GpuRunner``, the Backend the engine uses), ``compile`` (modules and
their cache), ``launcher``, ``buffers`` (allocation, poison, guard bands), ``l2`` (the L2
flush and the stream hold), ``sampling`` (event-timed samples), ``graphs`` (CUDA graph
capture), ``bandwidth`` (copy bandwidth) and ``pipeline`` (the pipeline context)."""
