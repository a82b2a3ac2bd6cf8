"""Instruction semantics, written once over an abstract value interface.

* :mod:`.registry` -- the one registry: base mnemonic -> :class:`SemSpec`
  (``lookup(opcode)``, ``all_specs()``, :class:`Unsupported`);
* :mod:`.values` -- the value interface semantic functions are written against;
* :mod:`.npbackend` -- numpy backend (64 lanes per call; the emulator's);
* :mod:`.z3backend` -- z3 backend and ``symexec`` (the verifier's);
* :mod:`.valu`, :mod:`.vopc`, :mod:`.salu`, :mod:`.special` -- the definitions.
"""

from .registry import SemSpec, Unsupported, all_specs, base_mnemonic, lookup  # noqa: F401
