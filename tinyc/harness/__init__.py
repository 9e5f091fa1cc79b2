"""What `tinyc run`, `bench`, `tune` (and the tuner itself) launch a kernel with, and count.

- sizes.py: every `?` of a kernel's arguments, made to agree (`--size`);
- arguments.py: random arguments of those sizes, laid out as the types declare;
- batches.py: the batch to launch, one the kernel can take with those arguments;
- check.py: `--check`, the device's results against the NumPy reference interpreter;
- work.py: the work model of `tinyc bench` and benchmarks/ (flops, minimum bytes moved).

It sits below the command line (tinyc/cli/) so that the tuner (tinyc/tune/) uses it
without importing the command line. Bad requests raise UsageError (exit code 2 there).
"""
