import pytest


@pytest.fixture(scope="session")
def vadd_nops(tmp_path_factory, llvm_mc):
    from evolve_helpers import make_vadd_nops
    return make_vadd_nops(tmp_path_factory.mktemp("k0") / "vadd_nops.co")
