"""Built-in stage plugins: one module a stage, each exporting ``STAGE``.

The registry scans this folder; this file only makes it installable as
``harness.builtin_plugins`` and is itself skipped by the scan.
"""
