"""tinyc's benchmark suite: tinyc vs hand-written OpenCL C vs NumPy, side by side.

Run `python -m benchmarks.run` from the repository root; see README.md here.
"""
