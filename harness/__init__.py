"""A PyCUDA kernel benchmark harness for spike-stream conversion operators.

Each stage is a plugin (``plugins/<name>.py``) declaring a CUDA kernel (``kernels/<name>.cu``)
and its NumPy reference. The library never prints or exits; ``harness.front`` is the only
package that talks to the terminal, and ``harness.backends.pycuda.context`` the only module
that creates a CUDA context.
"""

__version__ = "0.1.0"
