"""Cluster mode (``harness bench --cluster``, ``harness validate --cluster``) on Dask
distributed: one worker process per GPU, one thread each, the sweep's points handed out by
the driver, which alone writes the result files.

``connect`` opens the cluster (every GPU of this machine, a running scheduler, or workers
submitted through Slurm), ``worker`` is what runs inside a worker process (its backend built
once), ``driver`` hands out the points with back-pressure and retries, ``outputs`` holds the
driver's result files, and ``bench`` and ``validate`` are the two commands' cluster runs.
Dask is an optional extra: nothing here imports it until a cluster is asked for.
"""
