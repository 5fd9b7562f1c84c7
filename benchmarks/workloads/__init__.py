"""Fake-model workloads, one module per framework.

Each module exposes ``NAME``, ``FRAMEWORK_DISTS``, ``PEERS`` (peer instrumentors: label →
distribution), ``workload()`` (a callable doing one run of the workload; it raises
``ImportError`` when the framework is not installed, and the comparison is then skipped) and
``install(variant, provider)`` returning ``(install, remove)`` callables for ``ours``,
``ours_no_content`` and each peer label; it raises ``ImportError`` when a peer is not installed.
Optional: ``dispatch()`` (the framework's own cost of one do-nothing observer, same shape as
``install``) and ``BATCH_DIVISOR`` (shorter timed batches for slow workloads).
"""
