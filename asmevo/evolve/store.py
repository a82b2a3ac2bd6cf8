"""The lineage store: one SQLite database (WAL) per run directory, ``lineage.sqlite``.

Schema (version 1; also read by the MCP server):

``meta(key PRIMARY KEY, value)``
    ``schema`` (1), ``k0_sha256``, ``kernel``, ``harness_sha256``, ``config`` (JSON of the
    search options), ``scorer`` (JSON: the timing model's name and version), ``created``.
``candidates(hash PRIMARY KEY, ...)``
    one row per distinct program (content hash of the kernel's canonical text,
    :func:`asmevo.evolve.candidate.content_hash`): ``parent`` (hash), ``step`` (the step
    that first proposed it; -1 for K0), ``island``, ``operator``, ``params`` (JSON),
    ``edit`` (JSON: what the operator did: pipeline, window edit, moves...),
    ``hypothesis``, ``listing`` (canonical text), ``blocks`` (pickled IR blocks),
    ``status`` (a verifier status, or ``rejected-slower``), ``outcome``
    (accepted | rejected | unknown), ``accepted`` (0/1: passed the gate and the timing
    rule, so it entered the population), ``verdict`` (JSON receipt: the verifier's
    ``Verdict.to_json()`` with counterexamples), ``cycles``, ``profile_hash``,
    ``windows`` (JSON hot windows), ``times`` (JSON seconds per stage: build, verify,
    score), ``created`` (unix time).
``steps(step PRIMARY KEY, batch, island, operator, parent, hash, outcome, message, seconds)``
    every step of the loop, also those that produced nothing: ``outcome`` is
    ``evaluated``, ``duplicate`` (hash already stored: not evaluated again),
    ``no-candidate`` (operator found no legal move), ``agent-failure`` (timeout, crash,
    malformed answer), ``operator-error``, ``over-budget``.
``batches(batch PRIMARY KEY, first_step, n_steps, committed)``
    a round is replayed on ``--resume`` only once it is committed; a killed round is
    proposed again and its stored candidates are reused, never evaluated twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS candidates (
    hash TEXT PRIMARY KEY, parent TEXT, step INTEGER, island INTEGER, operator TEXT,
    params TEXT, edit TEXT, hypothesis TEXT, listing TEXT, blocks BLOB,
    status TEXT, outcome TEXT, accepted INTEGER, verdict TEXT, cycles REAL,
    profile_hash TEXT, windows TEXT, times TEXT, created REAL);
CREATE TABLE IF NOT EXISTS steps (
    step INTEGER PRIMARY KEY, batch INTEGER, island INTEGER, operator TEXT, parent TEXT,
    hash TEXT, outcome TEXT, message TEXT, seconds REAL);
CREATE TABLE IF NOT EXISTS batches (
    batch INTEGER PRIMARY KEY, first_step INTEGER, n_steps INTEGER, committed REAL);
CREATE INDEX IF NOT EXISTS cand_step ON candidates(step);
"""

_JSON_COLS = ("params", "edit", "verdict", "windows", "times")


class Store:
    """The lineage store of one run directory (driver side only)."""

    def __init__(self, path: str):
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.row_factory = sqlite3.Row
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    # -- meta ---------------------------------------------------------------
    def meta(self) -> dict:
        return {r["key"]: r["value"] for r in self.db.execute("SELECT key, value FROM meta")}

    def set_meta(self, **kv) -> None:
        with self.db:
            for k, v in kv.items():
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                (k, v if isinstance(v, str) else json.dumps(v, sort_keys=True)))

    # -- candidates ---------------------------------------------------------
    def has(self, h: str) -> bool:
        return self.db.execute("SELECT 1 FROM candidates WHERE hash=?", (h,)).fetchone() is not None

    def add_candidate(self, rec: dict) -> bool:
        """Insert a candidate record; False (and nothing written) when its hash is stored."""
        rec = dict(rec)
        rec.setdefault("created", time.time())
        for c in _JSON_COLS:
            if c in rec and not isinstance(rec[c], str) and rec[c] is not None:
                rec[c] = json.dumps(rec[c], sort_keys=True, default=str)
        cols = ", ".join(rec)
        try:
            self.db.execute(f"INSERT INTO candidates ({cols}) VALUES ({', '.join('?' * len(rec))})",
                            tuple(rec.values()))
        except sqlite3.IntegrityError:
            return False
        return True

    def update_verdict(self, rec: dict) -> None:
        """Replace the gate's findings (status, outcome, accepted, verdict, cycles, profile
        hash, windows, times) of stored candidate ``rec["hash"]``: a candidate verified again
        (its stored verdict was given by another version of the verifier)."""
        cols = ("status", "outcome", "accepted", "verdict", "cycles", "profile_hash", "windows",
                "times")
        vals = [json.dumps(rec.get(c), sort_keys=True, default=str)
                if c in _JSON_COLS and rec.get(c) is not None and not isinstance(rec.get(c), str)
                else rec.get(c) for c in cols]
        self.db.execute(f"UPDATE candidates SET {', '.join(c + '=?' for c in cols)} WHERE hash=?",
                        (*vals, rec["hash"]))

    def candidate(self, h: str, *, blocks: bool = True) -> dict | None:
        cols = "*" if blocks else "hash, parent, step, island, operator, params, edit, hypothesis, " \
            "status, outcome, accepted, verdict, cycles, profile_hash, windows, times, created"
        r = self.db.execute(f"SELECT {cols} FROM candidates WHERE hash=?", (h,)).fetchone()
        return _row(r) if r else None

    def candidates(self, *, accepted_only: bool = False, blocks: bool = False) -> list[dict]:
        cols = "*" if blocks else "hash, parent, step, island, operator, params, edit, hypothesis, " \
            "status, outcome, accepted, verdict, cycles, profile_hash, windows, times, created"
        q = f"SELECT {cols} FROM candidates"
        if accepted_only:
            q += " WHERE accepted=1"
        return [_row(r) for r in self.db.execute(q + " ORDER BY step, hash")]

    def count(self) -> int:
        """Distinct candidates evaluated (K0 not counted)."""
        return self.db.execute("SELECT COUNT(*) FROM candidates WHERE step >= 0").fetchone()[0]

    def count_before(self, step: int) -> int:
        """Distinct candidates first proposed by steps ``0 .. step-1``."""
        return self.db.execute("SELECT COUNT(*) FROM candidates WHERE step >= 0 AND step < ?",
                               (step,)).fetchone()[0]

    # -- steps and rounds ---------------------------------------------------
    def add_step(self, rec: dict) -> None:
        cols = ", ".join(rec)
        self.db.execute(f"INSERT OR REPLACE INTO steps ({cols}) VALUES ({', '.join('?' * len(rec))})",
                        tuple(rec.values()))

    def steps(self, batch: int | None = None) -> list[dict]:
        if batch is None:
            return [dict(r) for r in self.db.execute("SELECT * FROM steps ORDER BY step")]
        return [dict(r) for r in self.db.execute("SELECT * FROM steps WHERE batch=? ORDER BY step",
                                                 (batch,))]

    def commit_batch(self, batch: int, first_step: int, n_steps: int) -> None:
        self.db.execute("INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?)",
                        (batch, first_step, n_steps, time.time()))

    def committed_batches(self) -> list[dict]:
        return [dict(r) for r in self.db.execute("SELECT * FROM batches ORDER BY batch")]

    def drop_uncommitted_steps(self, next_step: int) -> None:
        self.db.execute("DELETE FROM steps WHERE step >= ?", (next_step,))


def _row(r: sqlite3.Row) -> dict:
    d = dict(r)
    for c in _JSON_COLS:
        if d.get(c):
            try:
                d[c] = json.loads(d[c])
            except ValueError:
                pass
    return d


def open_store(run_dir: str) -> Store:
    os.makedirs(run_dir, exist_ok=True)
    return Store(os.path.join(run_dir, "lineage.sqlite"))
