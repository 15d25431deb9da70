#!/usr/bin/env python3
"""The Rollup server's rules (S1-S9 of SimKit's SPEC) in Python's standard library,
its state in SQLite, speaking SimKit's wire protocol (docs/server-protocol.md).

    python3 server.py                      # stdio: one JSON message a line in, one reply a line out
    python3 server.py --http 8035          # HTTP: POST /simkit, one message a body
    python3 server.py --bug NAME           # a planted bug (see BUGS)
    python3 server.py --db FILE            # stdio: keep the state in FILE
    python3 server.py --no-batch           # do not announce batches: one message a round trip

Its state is durable (SPEC S10: a restart loses nothing it acknowledged): an SQLite file
with its journal on, one transaction a message (a batch: one for the whole batch), in the
directory SimKit names in SIMKIT_DATA_DIR (state.sqlite; over HTTP, the service's own
directory, a file a session). Started again there, it comes back as it was; over HTTP,
the "restart" message makes it drop what it holds in memory and reopen its file. Without
SIMKIT_DATA_DIR or --db, over stdio, it keeps its state in memory (nothing to restart from).

It reads no clock: every message carries the virtual time ("now"). A port of
Sources/SimKit/Server/ServerModel*.swift and AccessHistory.swift: see there, and
docs/checkers.md "How the server dates a stop", for why each rule reads as it does.
"""
import json
import sqlite3
import sys

PROTOCOL = 1
NEVER = (1 << 64) - 1
WALK_MAX = 100_000          # every walk back through the history is bounded
MAX_IN_FLIGHT_MS = 2 * 3_600_000   # the longest a request may be in flight before it is judged (S2 across an update)

BUGS = {
    # S5: the developer's enable also lifts what Rollup did (a revoke or a rejection).
    "enable-lifts-rollup": "enable lifts Rollup's revoke or rejection of the app",
    # S4: an old key in its grace is checked for its grace alone, not for its app's
    # disable (a shortcut that skips the app's row for old keys).
    "disable-spares-grace-keys": "an old key in its grace keeps working while its app is disabled",
    # S10: the state lives in memory; only the world's declared setup (the reset message,
    # as a configuration file would) is on disk, so a restart comes back as declared.
    "state-in-memory": "keeps its state in memory: a restart forgets every action, registration and reset since the setup",
}

LOCK_ERRORS = ("app_key_invalid", "app_disabled", "app_key_mismatch")


def t_in(t):
    """A time as stored: NULL for NEVER (and for a time past SQLite's integers, as late as never)."""
    return None if t >= (1 << 63) else t


def t_out(v):
    return NEVER if v is None else v


class Server:
    def __init__(self, db=":memory:", bug=None, batch=True, setup_file=None):
        self.batch = batch
        self.bug = bug
        self.path = db
        # The bug state-in-memory keeps only the setup on disk (as a configuration file).
        self.setup_file = setup_file if bug == "state-in-memory" else None
        if self.setup_file is not None:
            self.path = ":memory:"
        self.open()

    def open(self):
        """Opens the state (after a restart: as it was stored) and reads what memory caches."""
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        if self.path == ":memory:":
            self.db.execute("PRAGMA journal_mode=OFF")
        else:
            # The journal on: each message's transaction is whole or absent after a crash.
            # synchronous=OFF: a process killed keeps what it wrote (the OS holds it); only
            # the machine's own crash could lose it, which SimKit does not simulate.
            self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=OFF")
        self.app_count = 0
        self.device_count = 0
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "apps" in tables and "devices" in tables:
            self.app_count = self.db.execute("SELECT COUNT(*) FROM apps").fetchone()[0]
            self.device_count = self.db.execute("SELECT COUNT(*) FROM devices").fetchone()[0]
        elif self.setup_file is not None:
            try:
                with open(self.setup_file) as f:
                    self.reset(json.load(f))
            except FileNotFoundError:
                pass

    def restart(self):
        """S10 over HTTP: drop what memory holds and reopen the stored state."""
        self.db.close()
        self.open()
        return {"ok": True}

    # -- setup --------------------------------------------------------------------------

    def reset(self, m):
        if self.setup_file is not None:
            with open(self.setup_file, "w") as f:
                json.dump(m, f)
        q = self.db.executescript
        q("""
        DROP TABLE IF EXISTS accounts; DROP TABLE IF EXISTS apps; DROP TABLE IF EXISTS keys;
        DROP TABLE IF EXISTS devices; DROP TABLE IF EXISTS intervals; DROP TABLE IF EXISTS earlier;
        CREATE TABLE accounts (id INTEGER PRIMARY KEY, status TEXT, before_revocation TEXT);
        CREATE TABLE apps (id INTEGER PRIMARY KEY, account INTEGER, review TEXT, before_revocation TEXT,
                           disabled INTEGER, current_key TEXT,
                           refused_since INTEGER, pending_since INTEGER);
        CREATE TABLE keys (name TEXT PRIMARY KEY, state TEXT, app INTEGER, deadline INTEGER,
                           issued_at INTEGER, stopped_at INTEGER);
        CREATE TABLE devices (id INTEGER PRIMARY KEY, last_judged_at INTEGER, servable_at INTEGER,
                              generation INTEGER, owner INTEGER, seen_build INTEGER, seen_key TEXT, live INTEGER,
                              last_issued INTEGER);
        -- S8: a registration supersedes nothing; a device's records older than its newest
        -- (the one in devices) stay until a reset names them, oldest first by rowid.
        CREATE TABLE earlier (device INTEGER, generation INTEGER, owner INTEGER);
        CREATE INDEX earlier_by_device ON earlier (device, generation);
        CREATE TABLE intervals (app INTEGER, kind TEXT, from_t INTEGER, to_t INTEGER);
        CREATE INDEX intervals_by_app ON intervals (app, kind);
        """)
        x = self.db.execute
        for a in m["accounts"]:
            status = "approved" if a["approved"] else "unapproved"
            x("INSERT INTO accounts VALUES (?, ?, ?)", (a["id"], status, status))
        for name in m["keys"]:
            x("INSERT INTO keys VALUES (?, 'unissued', NULL, NULL, NULL, NULL)", (name,))
        for a in m["apps"]:
            review = "approved" if a["approved"] else "pending"
            x("INSERT INTO apps VALUES (?, ?, ?, 'approved', 0, ?, NULL, NULL)", (a["id"], a["account"], review, a["key"]))
            x("UPDATE keys SET state = 'current', app = ?, issued_at = 0 WHERE name = ?", (a["id"], a["key"]))
        self.app_count = len(m["apps"])
        self.device_count = m["devices"]
        x("INSERT INTO devices SELECT value, NULL, NULL, 0, 0, 0, '', 0, 0 FROM json_each(?)",
          (json.dumps(list(range(self.device_count))),))
        self.note_access(0)
        return {"ok": True}

    # -- reads and writes -----------------------------------------------------------------
    # A time that may be NEVER is stored as NULL (2^64 - 1 does not fit SQLite's integers).

    def key(self, name):
        r = self.db.execute("SELECT state, app, deadline, issued_at, stopped_at FROM keys WHERE name = ?", (name,)).fetchone()
        if r is None:
            return None
        return {"name": name, "state": r[0], "app": r[1], "deadline": t_out(r[2]), "issued_at": t_out(r[3]), "stopped_at": t_out(r[4])}

    def app(self, a):
        r = self.db.execute("SELECT account, review, before_revocation, disabled, current_key, refused_since, pending_since "
                            "FROM apps WHERE id = ?", (a,)).fetchone()
        return {"account": r[0], "review": r[1], "before_revocation": r[2], "disabled": bool(r[3]),
                "current_key": r[4], "refused_since": t_out(r[5]), "pending_since": t_out(r[6])}

    def account_status(self, c):
        return self.db.execute("SELECT status FROM accounts WHERE id = ?", (c,)).fetchone()[0]

    def device(self, d):
        r = self.db.execute("SELECT last_judged_at, servable_at, generation, owner, seen_build, seen_key, live, last_issued "
                            "FROM devices WHERE id = ?", (d,)).fetchone()
        return {"last_judged_at": t_out(r[0]), "servable_at": t_out(r[1]), "generation": r[2], "owner": r[3],
                "seen_build": r[4], "seen_key": r[5], "live": bool(r[6]), "last_issued": r[7]}

    def put_device(self, d, s):
        self.db.execute("UPDATE devices SET last_judged_at = ?, servable_at = ?, generation = ?, owner = ?, seen_build = ?, "
                        "seen_key = ?, live = ?, last_issued = ? WHERE id = ?",
                        (t_in(s["last_judged_at"]), t_in(s["servable_at"]), s["generation"], s["owner"], s["seen_build"],
                         s["seen_key"], int(s["live"]), s["last_issued"], d))

    def intervals(self, a, kind):
        return self.db.execute("SELECT from_t, to_t, rowid FROM intervals WHERE app = ? AND kind = ? ORDER BY rowid",
                               (a, kind)).fetchall()

    def record(self, d):
        s = self.device(d)
        return {"owner": s["owner"], "generation": s["generation"]} if s["live"] else None

    def held(self, d):
        """The device's records besides its newest, oldest first (the reply's "held")."""
        rows = self.db.execute("SELECT owner, generation FROM earlier WHERE device = ? ORDER BY rowid", (d,)).fetchall()
        return [{"owner": r[0], "generation": r[1]} for r in rows]

    # -- S2: the verdict ----------------------------------------------------------------

    def app_answer(self, a):
        r = self.app(a)
        if r["disabled"] or r["review"] in ("rejected", "revoked") or self.account_status(r["account"]) != "approved":
            return "app_disabled"
        if r["review"] == "pending":
            return "app_pending"
        return "ok"

    def key_verdict(self, name, now):
        k = self.key(name)
        if k is None or k["state"] in ("unissued", "stopped"):
            return "app_key_invalid", 0
        a = k["app"]
        if k["state"] == "previous":
            if not now < k["deadline"]:
                return "app_key_invalid", 0
            if self.bug == "disable-spares-grace-keys":
                return ("app_pending" if self.app(a)["review"] == "pending" else "ok"), a
        return self.app_answer(a), a

    def owner_of(self, cred):
        """The owner of the record the credential names, if the server holds it (S2.4)."""
        if cred is None or not (0 <= cred["device"] < self.device_count):
            return None
        s = self.device(cred["device"])
        if s["live"] and s["generation"] == cred["generation"]:
            return s["owner"]
        r = self.db.execute("SELECT owner FROM earlier WHERE device = ? AND generation = ?",
                            (cred["device"], cred["generation"])).fetchone()
        return None if r is None else r[0]

    def known(self, cred):
        return self.owner_of(cred) is not None

    def handle(self, m):
        now = m["now"]
        if m["kind"] == "reset":
            return self.reply(m, self.reset_request(m))
        status, credential = self.judge(m, now)
        stopped_since = self.note_judged(m, status, now)
        return self.reply(m, status, credential, stopped_since)

    def reply(self, m, status, credential=None, stopped_since=None):
        out = {"status": status, "servedAt": m["now"], "record": self.record(m["device"])}
        held = self.held(m["device"])
        if held:
            out["held"] = held
        if credential is not None:
            out["credential"] = credential
        if stopped_since is not None:
            out["stoppedSince"] = stopped_since
        return out

    def judge(self, m, now):
        verdict, a = self.key_verdict(m["key"], now)          # S1, S2.1-S2.3
        if verdict != "ok":
            return verdict, None
        d = m["device"]
        if m["kind"] == "register":                          # S6: App Attest
            if m["attestedApp"] != a:
                return "attestation_failed", None
            s = self.device(d)
            if s["live"]:   # S8: the record before it stays, known by its own credential
                self.db.execute("INSERT INTO earlier VALUES (?, ?, ?)", (d, s["generation"], s["owner"]))
            s["last_issued"] += 1
            s["generation"] = s["last_issued"]
            s["owner"] = a
            s["live"] = True
            self.put_device(d, s)
            return "ok", {"device": d, "generation": s["generation"]}
        cred = m["credential"]
        owner = self.owner_of(cred)
        if owner is None:                                    # S2.4
            return "device_unknown", None
        if m["attestedApp"] is None or cred["device"] != d:  # S6: the assertion
            return "attestation_failed", None
        if owner != a:                                       # S2.5
            return "app_key_mismatch", None
        return "ok", None                                    # S2.6, S7

    def reset_request(self, m):
        """S8: deletes the record its credential names, whatever the key's state."""
        cred = m["credential"]
        if not self.known(cred):
            return "ok"
        if m["attestedApp"] is None or cred["device"] != m["device"]:
            return "attestation_failed"
        d = cred["device"]
        s = self.device(d)
        if s["live"] and s["generation"] == cred["generation"]:
            # The newest goes; the newest earlier record, if any, takes its place.
            last = self.db.execute("SELECT rowid, owner, generation FROM earlier WHERE device = ? ORDER BY rowid DESC LIMIT 1",
                                   (d,)).fetchone()
            if last is None:
                s["live"] = False
            else:
                self.db.execute("DELETE FROM earlier WHERE rowid = ?", (last[0],))
                s["owner"], s["generation"] = last[1], last[2]
            self.put_device(d, s)
        else:
            self.db.execute("DELETE FROM earlier WHERE device = ? AND generation = ?", (d, cred["generation"]))
        return "ok"

    # -- S2: stoppedSince -------------------------------------------------------------

    def note_judged(self, m, status, now):
        d = m["device"]
        stopped_since = None
        if status in LOCK_ERRORS:
            servable = self.latest_servable(m, now)
            s = self.device(d)
            if servable != NEVER:   # only ever later: the in-flight window may find an earlier moment
                s["servable_at"] = servable if s["servable_at"] == NEVER else max(s["servable_at"], servable)
            stopped_since = 0 if s["servable_at"] == NEVER else min(s["servable_at"] + 1, now)
        else:
            s = self.device(d)
            s["servable_at"] = now
        s["last_judged_at"] = now
        s["seen_build"] = m["build"]
        s["seen_key"] = m["key"]
        self.put_device(d, s)
        return stopped_since

    def latest_servable(self, m, now):
        s = self.device(m["device"])
        cred = m["credential"]
        held_owner = self.owner_of(cred) if cred is not None and cred["device"] == m["device"] else None
        holds = held_owner is not None
        owner = s["owner"] if held_owner is None else held_owner
        first = s["last_judged_at"] == NEVER
        frm = 0 if first else s["last_judged_at"] + 1
        build = m["build"]
        new_build = build != 0 if first else (build != s["seen_build"] or m["key"] != s["seen_key"])
        skipped = build != 0 if first else (new_build and build != (s["seen_build"] + 1) & 0xFFFF)
        # The new build's key may have been carried before the old build's last request
        # arrived (sent before the update, in flight since): counted from up to
        # MAX_IN_FLIGHT_MS earlier, which dates the stop later (sound).
        key_frm = max(0, frm - MAX_IN_FLIGHT_MS) if new_build and not first else frm
        candidates = [self.latest_unrefused_key(m["key"], holds, owner, key_frm, now)]
        if new_build and not first:
            candidates.append(self.latest_unrefused_key(s["seen_key"], holds, owner, frm, now))
        if skipped:
            for a in range(self.app_count):
                foreign = holds and a != owner
                candidates.append(self.latest_pending(a, frm, now) if foreign else self.latest_unrefused_app(a, frm, now))
        found = [t for t in candidates if t is not None]
        return max(found) if found else NEVER

    def latest_unrefused_key(self, name, holds, owner, frm, now):
        k = self.key(name)
        a = None if k is None or k["state"] == "unissued" else k["app"]
        mismatch = holds and a is not None and a != owner
        refusals = self.intervals(a, "refused") if a is not None else []
        pendings = self.intervals(a, "pending") if mismatch else []
        app = self.app(a) if a is not None else None
        t = now
        for _ in range(WALK_MAX):
            if not t > frm:
                return None
            x = t - 1
            start = t
            s = self.key_invalidity(k, x)
            if s is not None:
                start = min(start, s)
            if a is not None:
                s = self.app_refusal(app, refusals, x)
                if s is not None:
                    start = min(start, s)
            if mismatch:
                s = self.mismatch_refusal(app, pendings, x)
                if s is not None:
                    start = min(start, s)
            if not start < t:
                return x
            t = start
        return t - 1 if t > frm else None

    @staticmethod
    def key_invalidity(k, x):
        if k is None or x < k["issued_at"]:
            return 0
        frm = k["stopped_at"]
        if k["state"] == "previous":
            frm = min(frm, k["deadline"])
        return frm if frm <= x else None

    @staticmethod
    def app_refusal(app, refusals, x):
        if app["refused_since"] <= x:
            return app["refused_since"]
        for (f, t, _) in reversed(refusals):
            if f <= x < t:
                return f
            if t <= x:
                break
        return None

    @staticmethod
    def mismatch_refusal(app, pendings, x):
        if app["pending_since"] <= x:
            return None
        for (f, t, _) in reversed(pendings):
            if f <= x < t:
                return None
            if t <= x:
                return t
        return 0

    def latest_unrefused_app(self, a, frm, now):
        app, refusals = self.app(a), self.intervals(a, "refused")
        t = now
        for _ in range(WALK_MAX):
            if not t > frm:
                return None
            s = self.app_refusal(app, refusals, t - 1)
            if s is None or not s < t:
                return t - 1
            t = s
        return t - 1 if t > frm else None

    def latest_pending(self, a, frm, now):
        app = self.app(a)
        latest = None
        if app["pending_since"] < now:
            latest = now - 1
        else:
            older = [r for r in self.intervals(a, "pending") if r[0] < now]
            if older:
                latest = min(older[-1][1], now) - 1
        if latest is None or latest < frm:
            return None
        return latest

    # -- the history behind stoppedSince ------------------------------------------------

    def note_access(self, now):
        for a in range(self.app_count):
            answer = self.app_answer(a)
            self.note_app(a, answer == "app_disabled", now)
            self.note_app_pending(a, answer == "app_pending", now)

    def note_app(self, a, refused, now):
        since = self.app(a)["refused_since"]
        if refused and since == NEVER:
            self.end_refusal_before_now(a, now)
            self.db.execute("UPDATE apps SET refused_since = ? WHERE id = ?", (now, a))
        elif not refused and since != NEVER:
            if since < now:
                self.db.execute("INSERT INTO intervals VALUES (?, 'refused', ?, ?)", (a, since, now))
            self.db.execute("UPDATE apps SET refused_since = NULL WHERE id = ?", (a,))

    def note_app_pending(self, a, pending, now):
        since = self.app(a)["pending_since"]
        if pending and since == NEVER:
            self.db.execute("UPDATE apps SET pending_since = ? WHERE id = ?", (now, a))
        elif not pending and since != NEVER:
            if since < now:
                self.db.execute("INSERT INTO intervals VALUES (?, 'pending', ?, ?)", (a, since, now))
            self.db.execute("UPDATE apps SET pending_since = NULL WHERE id = ?", (a,))

    def note_key_stopped(self, name, a, now):
        k = self.key(name)
        self.db.execute("UPDATE keys SET stopped_at = ? WHERE name = ?", (t_in(min(now, k["stopped_at"])), name))
        if self.app(a)["refused_since"] == NEVER:
            self.end_refusal_before_now(a, now)

    def end_refusal_before_now(self, a, now):
        """Access that came back and stops again in one millisecond is a break all the same."""
        refusals = self.intervals(a, "refused")
        if not refusals or refusals[-1][1] != now:
            return
        f, _, rowid = refusals[-1]
        if f < now - 1:
            self.db.execute("UPDATE intervals SET to_t = ? WHERE rowid = ?", (now - 1, rowid))
        else:
            self.db.execute("DELETE FROM intervals WHERE rowid = ?", (rowid,))

    # -- the dashboard and Rollup (S3-S5) ---------------------------------------------

    def rotate(self, m):
        a, new, now = m["app"], m["newKey"], m["now"]
        k = self.key(new)
        if k is None or k["state"] != "unissued":
            return {"outcome": "new-key-already-issued"}
        old = self.app(a)["current_key"]
        if m["oldKey"] == "keep":
            deadline = min(now + m["graceMs"], NEVER)
            self.db.execute("UPDATE keys SET state = 'previous', deadline = ? WHERE name = ?", (t_in(deadline), old))
        else:
            self.db.execute("UPDATE keys SET state = 'stopped' WHERE name = ?", (old,))
            self.note_key_stopped(old, a, now)
        self.db.execute("UPDATE keys SET state = 'current', app = ?, issued_at = ? WHERE name = ?", (a, now, new))
        self.db.execute("UPDATE apps SET current_key = ? WHERE id = ?", (new, a))
        return {"outcome": "rotated"}

    def stop_old_key(self, m):
        a, name, now = m["app"], m["key"], m["now"]
        k = self.key(name)
        if k is None or k["state"] != "previous" or k["app"] != a:
            return {"applied": False}
        self.db.execute("UPDATE keys SET state = 'stopped' WHERE name = ?", (name,))
        if k["deadline"] > now:
            self.note_key_stopped(name, a, now)
        else:
            self.db.execute("UPDATE keys SET stopped_at = ? WHERE name = ?", (t_in(min(k["deadline"], k["stopped_at"])), name))
        return {"applied": True}

    def disable(self, m):
        a = m["app"]
        if self.app(a)["disabled"]:
            return {"applied": False}
        self.db.execute("UPDATE apps SET disabled = 1 WHERE id = ?", (a,))
        self.note_access(m["now"])
        return {"applied": True}

    def enable(self, m):
        a = m["app"]
        r = self.app(a)
        applied = r["disabled"]
        self.db.execute("UPDATE apps SET disabled = 0 WHERE id = ?", (a,))
        if self.bug == "enable-lifts-rollup" and r["review"] in ("revoked", "rejected"):
            self.db.execute("UPDATE apps SET review = 'approved' WHERE id = ?", (a,))
            applied = True
        self.note_access(m["now"])
        return {"applied": applied}

    APP_MOVES = {("approve", "pending"): "approved", ("approve", "rejected"): "approved",
                 ("reject", "pending"): "rejected", ("reject", "approved"): "rejected",
                 ("revoke", "pending"): "revoked", ("revoke", "approved"): "revoked", ("revoke", "rejected"): "revoked"}
    ACCOUNT_MOVES = {("approve", "unapproved"): "approved", ("revoke", "unapproved"): "revoked",
                     ("revoke", "approved"): "revoked"}

    def rollup_app(self, m):
        a, action = m["app"], m["action"]
        r = self.app(a)
        frm = r["review"]
        to = r["before_revocation"] if (action, frm) == ("restore", "revoked") else self.APP_MOVES.get((action, frm))
        if to is None:
            return {"applied": False}
        if to == "revoked":
            self.db.execute("UPDATE apps SET before_revocation = ? WHERE id = ?", (frm, a))
        self.db.execute("UPDATE apps SET review = ? WHERE id = ?", (to, a))
        self.note_access(m["now"])
        return {"applied": True}

    def rollup_account(self, m):
        c, action = m["account"], m["action"]
        frm = self.account_status(c)
        before = self.db.execute("SELECT before_revocation FROM accounts WHERE id = ?", (c,)).fetchone()[0]
        to = before if (action, frm) == ("restore", "revoked") else self.ACCOUNT_MOVES.get((action, frm))
        if to is None:
            return {"applied": False}
        if to == "revoked":
            self.db.execute("UPDATE accounts SET before_revocation = ? WHERE id = ?", (frm, c))
        self.db.execute("UPDATE accounts SET status = ? WHERE id = ?", (to, c))
        self.note_access(m["now"])
        return {"applied": True}

    def forget_device(self, m):
        d = m["device"]
        s = self.device(d)
        if not s["live"]:   # a device with earlier records has a live newest one
            return {"applied": False}
        s["live"] = False
        self.put_device(d, s)
        self.db.execute("DELETE FROM earlier WHERE device = ?", (d,))
        return {"applied": True}

    # -- the protocol -------------------------------------------------------------------

    def transaction(self, m):
        """One message (a batch: all of it) in one transaction, committed before the reply
        leaves: what the server answered is what it stored (S10). A reset, which rebuilds
        the tables, and a restart, which reopens them, run alone."""
        op = m.get("op")
        if op in ("hello", "reset", "restart") or (op == "batch" and any(c.get("op") == "reset" for c in m.get("calls", []))):
            return self.message(m)
        self.db.execute("BEGIN")
        try:
            out = self.message(m)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return out

    def message(self, m):
        op = m.get("op")
        if op == "hello":
            out = {"protocol": PROTOCOL, "server": "python-example" + (f" --bug {self.bug}" if self.bug else "")}
            if self.batch:
                out["batch"] = True         # answers "batch": several messages a line, in order
        elif op == "batch" and self.batch:
            out = {"replies": [self.message(c) for c in m["calls"]]}
        elif op == "reset":
            out = self.reset(m)
        elif op == "restart":
            out = self.restart()
        elif op == "request":
            out = self.handle(m)
        elif op == "record":
            out = {"record": self.record(m["device"])}
        elif op == "rotate":
            out = self.rotate(m)
        elif op == "stop-old-key":
            out = self.stop_old_key(m)
        elif op == "disable":
            out = self.disable(m)
        elif op == "enable":
            out = self.enable(m)
        elif op == "rollup-app":
            out = self.rollup_app(m)
        elif op == "rollup-account":
            out = self.rollup_account(m)
        elif op == "forget-device":
            out = self.forget_device(m)
        else:
            out = {"error": f"unknown op {op!r}"}
        out["re"] = m.get("seq")
        return out


def serve_stdio(server):
    out = sys.stdout
    for line in sys.stdin:          # ends when SimKit closes the connection
        if not line.strip():
            continue
        reply = server.transaction(json.loads(line))
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


def serve_http(make, port):
    """One state per X-SimKit-Session header (each SimKit job sends its own), one thread per connection."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    servers, lock = {}, threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"   # keep-alive: one connection for a whole run
        disable_nagle_algorithm = True  # headers and body go in two writes: do not hold the second

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            session = self.headers.get("X-SimKit-Session", "")
            with lock:
                if session not in servers:
                    servers[session] = make(session)
                server = servers[session]
            try:
                reply = json.dumps(server.transaction(json.loads(body)), separators=(",", ":")).encode()
                code = 200
            except Exception as e:  # a bad message is the client's error: say so
                reply, code = json.dumps({"error": str(e)}).encode(), 400
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main(argv):
    import hashlib, os, tempfile
    bug, port, db, batch = None, None, None, True
    i = 0
    while i < len(argv):
        if argv[i] == "--bug" and i + 1 < len(argv) and argv[i + 1] in BUGS:
            bug = argv[i + 1]; i += 2
        elif argv[i] == "--http" and i + 1 < len(argv):
            port = int(argv[i + 1]); i += 2
        elif argv[i] == "--db" and i + 1 < len(argv):
            db = argv[i + 1]; i += 2
        elif argv[i] == "--no-batch":
            batch = False; i += 1
        else:
            sys.stderr.write(f"usage: server.py [--http PORT] [--db FILE] [--no-batch] [--bug {'|'.join(BUGS)}]\n")
            return 2
    data = os.environ.get("SIMKIT_DATA_DIR")
    if port is None:
        if db is None:
            db = os.path.join(data, "state.sqlite") if data else ":memory:"
        setup = os.path.join(data, "setup.json") if data else None
        serve_stdio(Server(db, bug, batch, setup_file=setup))
    else:
        # A file a session, in the service's own directory (SimKit starts no service).
        data = data or tempfile.mkdtemp(prefix="simkit-python-server-")
        def make(session):
            name = hashlib.sha256(session.encode()).hexdigest()[:16]
            return Server(os.path.join(data, f"session-{name}.sqlite"), bug, batch,
                          setup_file=os.path.join(data, f"session-{name}.setup.json"))
        sys.stderr.write(f"listening on http://127.0.0.1:{port}/simkit (state in {data})\n")
        serve_http(make, port)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
