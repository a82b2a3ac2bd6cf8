"""asmevo: compiler infrastructure for AMD GPU machine code (gfx942 / CDNA3).

Data flows one way: ``frontend`` (code objects and assembly text) -> ``ir`` ->
``analysis`` -> ``passes`` -> ``backend``; ``verify`` and ``emu`` sit beside the
pipeline.  See README.md.
"""

__version__ = "0.1.0"
