"""The verdict taxonomy: fixed statuses, outcomes, exit statuses, JSON records."""

import json

from asmevo.verify.verdict import DESCRIPTIONS, Evidence, Status, Verdict, combine


def test_taxonomy_is_exactly_the_documented_set():
    assert [s.value for s in Status] == [
        "accepted", "rejected-register-bounds", "rejected-descriptor-counts", "rejected-waitcnt",
        "rejected-hazard", "rejected-abi", "rejected-counterexample", "rejected-output-mismatch",
        "rejected-stray-write", "rejected-emulation-fault", "build-failed", "unknown-timeout",
        "unknown-unsupported", "unknown-unproved"]
    assert set(DESCRIPTIONS) == set(Status)


def test_exit_statuses():
    assert Status.ACCEPTED.exit_status == 0
    assert Status.BUILD_FAILED.exit_status == 1
    assert Status.REJECTED_ABI.exit_status == 1
    assert Status.UNKNOWN_TIMEOUT.exit_status == 3
    assert Status.UNKNOWN_UNSUPPORTED.exit_status == 3


def test_json_record_round_trips():
    v = Verdict(Status.REJECTED_OUTPUT_MISMATCH, "c[3] differs",
                [Evidence("diff", "first-mismatch", "trial 0", {"index": 3, "orig": float("nan")})])
    d = json.loads(v.dumps())
    assert d["status"] == "rejected-output-mismatch" and d["exit_status"] == 1
    assert d["evidence"][0]["data"] == {"index": 3, "orig": "nan"}


def test_combine_never_accepts_an_unknown_or_nothing():
    ok = Verdict(Status.ACCEPTED)
    unk = Verdict(Status.UNKNOWN_TIMEOUT, "z3 timeout")
    rej = Verdict(Status.REJECTED_HAZARD, "hazard")
    assert combine([ok, unk]).status is Status.UNKNOWN_TIMEOUT
    assert combine([unk, rej, ok]).status is Status.REJECTED_HAZARD
    assert combine([]).status is Status.UNKNOWN_UNSUPPORTED
    assert combine([ok, ok], {"static": "pass"}).status is Status.ACCEPTED


def test_docs_table_matches_the_taxonomy():
    import pathlib
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "verify.md").read_text()
    for st, desc in DESCRIPTIONS.items():
        row = f"| `{st.value}` | {st.outcome} | {st.exit_status} | {desc} |"
        assert row in doc, row
