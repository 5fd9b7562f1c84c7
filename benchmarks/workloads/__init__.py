"""Fake-model workloads, one module per framework.

Each module exposes ``NAME``, ``PEERS`` (peer instrumentors: label → distribution),
``workload()`` (a callable doing one run of the workload) and ``install(variant,
provider)`` returning ``(install, remove)`` callables for ``ours``, ``ours_no_content``
and each peer label. It raises ``ImportError`` when a peer is not installed.
"""
