"""The e-graphs that live as long as the process: rules loaded once, on the one thread that owns them, and
returned to their loaded state after each program.

Loading a rule set costs 0.1-0.2 s (egglog type-checks and compiles every rule), so each set is loaded once and
every program's facts go on top of it. Afterwards the e-graph must hold the rules alone again. egglog's
`(push)` / `(pop)` would do it, but a push copies every rule and table of the e-graph and a pop frees the copy:
on a real batched-matmul kernel that was about half of the pass's time. Instead a rule set loaded from the
shipped files gets a `reset` ruleset, one rule per table that deletes every row it holds, but for the tables only
the rule files' own facts fill (`FailOrder`, ...): no rule and no program writes those, so one iteration of the
reset leaves exactly the rows loading left. Rule files of a user's keep push and pop: they may subsume rows
(which no query, so no reset rule, matches) or run commands that cannot simply be run again.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import queue
import threading
import traceback
from collections.abc import Callable, Generator, Hashable, Iterator, Sequence
from typing import Any, TypeVar

import egglog.bindings as eb

from ...errors import InternalError, RuleError, UserError
from ..rule_index import rule_index, symbols
from ..rules import RuleFile, fact_relations, load_rule_file_slices, run_text
from ..shipped import is_shipped
from .fact_folder import FactFolder

T = TypeVar("T")
RESET = "reset"  # the ruleset that empties every table
_IMPORT_PID = os.getpid()
_RAN_IN_PID: int | None = None


def check_not_forked_after_use() -> None:
    """egglog's worker threads do not survive fork: a process forked after its parent ran egglog would hang."""
    global _RAN_IN_PID
    if _RAN_IN_PID is not None and os.getpid() != _RAN_IN_PID:
        raise UserError(
            "pypto-egg cannot run egglog in a process forked after its parent ran it: egglog's worker threads do "
            "not survive fork, so it would hang. Start worker processes with the 'spawn' or 'forkserver' method, "
            "e.g. ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn'))."
        )
    _RAN_IN_PID = os.getpid()


def forked_since_import() -> bool:
    """egglog's `(pop)` never returns in a process forked from the one that imported it."""
    return os.getpid() != _IMPORT_PID


Loader = Callable[[eb.EGraph, list[RuleFile]], Iterator[None]]  # loads rule files, yielding between slices


class ResidentRules:
    """An e-graph holding one set of rules, with the folder its fact files are read from. A program's facts go
    on top between `begin()` and `end()`, which leaves the e-graph as loading left it.

    Loading runs slice by slice (`advance`), so that the owner thread can load a set in the background between
    programs, or all at once (`finish`)."""

    def __init__(
        self, rule_files: Sequence[RuleFile] | Callable[[], Sequence[RuleFile]], load: Loader | None = None
    ) -> None:
        """`rule_files`: the files, or what writes them out when loading starts (a pruned set's text takes a few
        milliseconds to write, which a set asked for once and never loaded need not pay)."""
        self._files = rule_files
        self.load = load
        self.facts = FactFolder()
        self.egraph = eb.EGraph(fact_directory=self.facts.path)
        self._restore = ""
        self.ready = False  # loaded whole
        self.in_use = False
        self.dirty = False  # a program's rows are still in it (its reset is owed)
        self.declared: set[str] = set()  # the rulesets declared since loading (the steps of plans, strata.py)
        self.schema: dict[str, Any] = {}  # what each table is, learned by the first reading (extract.graph)
        # loading or a program failed half-way: the set is loaded again when next asked for
        self.broken = False
        self.key: Hashable | None = None  # what the owner keeps it under
        self.served = 0  # programs run on it
        self.last_used = 0  # the owner's program count when it last served or was asked for (_Registry.tick)
        self._slices: Generator[None, None, None] | None = self._loading()

    @functools.cached_property
    def rule_files(self) -> tuple[RuleFile, ...]:
        files = self._files
        return tuple(files() if callable(files) else files)

    @functools.cached_property
    def resets(self) -> bool:
        """Shipped files are reset by the reset ruleset; a user's file takes push and pop."""
        return all(is_shipped(rf.path) for rf in self.rule_files)

    def _loading(self) -> Generator[None, None, None]:
        if self.load is not None:
            yield from self.load(self.egraph, list(self.rule_files))
        else:
            for rf in self.rule_files:
                yield from load_rule_file_slices(self.egraph, rf)
        if self.resets:
            kept, again = constant_tables(self.rule_files)
            rules = reset_rules(self.egraph, kept)
            for start in range(0, len(rules), _RESET_SLICE):
                run_text(self.egraph, "\n".join(rules[start : start + _RESET_SLICE]), "<reset rules>")
                yield
            self._restore = " ".join([f"(run {RESET} 1)", *again])
        self.ready = True

    def advance(self) -> bool:
        """Load one more slice; whether any is left. A failure marks the set broken."""
        if self._slices is None:
            return False
        try:
            next(self._slices)
            return True
        except StopIteration:
            self._slices = None
            return False
        except BaseException:
            self._slices = None
            self.broken = True
            raise

    def discard(self) -> None:
        """Drop the e-graph here, on its owner thread (a loading left half-way holds the set in a cycle, which
        the collector would break on any thread)."""
        if self._slices is not None:
            self._slices.close()
            self._slices = None
        self.egraph = None  # type: ignore[assignment]
        self.broken = True
        self.facts.cleanup()

    def finish(self) -> None:
        """Load what is left (a RuleError names what egglog refused)."""
        try:
            while self.advance():
                pass
        except RuleError as e:  # its traceback's frames hold the e-graph, which only this thread may drop
            raise RuleError(str(e)) from None

    def begin(self) -> None:
        """Ready for a program: a reset still owed by the one before runs first."""
        if self.dirty:
            self.clean()
        self.in_use = True
        if not self.resets:
            run_text(self.egraph, "(push)", "<push>", reuse=True)

    def end(self) -> None:
        """The program is done: its rows are taken off once the owner thread has answered its caller (see
        `_Owner.after`), or by the next `begin`, whichever comes first."""
        self.in_use = False
        self.dirty = True
        own = registry()
        own.after(self.clean)
        self.served += 1
        if self.served >= _RECYCLE and self.key is not None and self.key not in own.renewals:
            own.renew(self)

    def owed_reset(self) -> str:
        """The reset the program before still owes, taken by the caller to run as the first command of its own
        program's first egglog call (one call the fewer); "" when none is owed, or where pop does it. Taken, it
        is no longer owed: a caller that fails before running it leaves its own rows too, and `end` owes the reset
        again, which takes every row off."""
        if not self.dirty or self.broken or not self.resets:
            return ""
        self.dirty = False
        return self._restore

    def clean(self) -> None:
        """Take the program's rows off. A failure here leaves the e-graph unusable: it is loaded again."""
        if not self.dirty or self.broken:
            return
        self.dirty = False
        try:
            run_text(self.egraph, self._restore or "(pop)", "<reset>", reuse=True)
        except BaseException:
            self.broken = True
            raise


def constant_tables(rule_files: Sequence[RuleFile]) -> tuple[frozenset[str], list[str]]:
    """The tables only the files' own top-level facts fill (no rule writes them and no program states them), which
    the reset keeps; and the files' other top-level facts, which it states again."""
    index = rule_index(tuple(rule_files))
    tables = index.declarations.tables
    written = set(fact_relations()).union(*(r.writes for r in index.rules))
    commands = [
        (rf.text[f.start : f.end], set(symbols(f.tree)) & tables)
        for rf, forms in zip(index.files, index.forms)
        for f in forms
        if isinstance(f.tree, list) and f.tree and f.tree[0] not in _NOT_FACTS
    ]
    named = set().union(*(names for _, names in commands))
    kept = frozenset(named - written)
    return kept, [text for text, names in commands if not names <= kept]


_NOT_FACTS = frozenset(
    {"rule", "rewrite", "birewrite", "relation", "function", "constructor", "datatype", "sort", "ruleset",
     "unstable-combined-ruleset"}
)  # fmt: skip


_RESET_SLICE = 8  # reset rules a slice of loading declares


def reset_rules(egraph: eb.EGraph, kept: frozenset[str] = frozenset()) -> list[str]:
    """One rule per table of the loaded e-graph but the `kept` ones, deleting each of its rows (relations,
    functions and constructors alike: a query matches every row but a subsumed one, and the shipped rules subsume
    none); the ruleset's declaration first."""
    lines = [f"(ruleset {RESET})"]
    for name, fn in egraph.freeze().functions.items():
        if name in kept:
            continue
        args = " ".join(f"x{i}" for i in range(len(fn.input_sorts)))
        call = f"({name} {args})" if args else f"({name})"
        query = call if fn.output_sort == "Unit" else f"(= y {call})"
        lines.append(f"(rule ({query}) ((delete {call})) :ruleset {RESET})")
    return lines


@functools.cache
def _watch_forks() -> None:
    os.register_at_fork(before=release_before_fork)


class _Registry:
    """The resident e-graphs of one thread: it alone makes, uses and drops them (egglog's EGraph may only be
    touched and dropped by the thread that made it)."""

    def __init__(self, thread: threading.Thread) -> None:
        _watch_forks()
        self.pid = os.getpid()
        self.thread = thread
        self.rules: dict[Hashable, ResidentRules] = {}
        self.background: list[ResidentRules] = []  # rule sets loading a slice at a time while no caller waits
        self.renewals: dict[Hashable, ResidentRules] = {}  # fresh copies of sets that ran _RECYCLE programs
        self.tick = 0  # programs that asked for a set here
        # how often each kind asked for its own set while it was not loaded
        self.asked: dict[Hashable, int] = {}
        self.loads_in_background = False

    def ask(self, key: Hashable) -> int:
        """Count one more ask for the set kept under `key`; how many there were."""
        if key not in self.asked and len(self.asked) >= _MAX_ASKED:
            self.asked.clear()  # (a process that met ever more kinds forgets the rare ones)
        self.asked[key] = self.asked.get(key, 0) + 1
        return self.asked[key]

    def after(self, fn: Callable[[], None]) -> None:
        """Run `fn` on this thread once the job under way has answered its caller (the home registry: not at
        all; what it would do, a program's reset, the next program on the set does first)."""

    def load_later(self, rr: ResidentRules) -> None:
        """Load a set in the background, a slice at a time while no caller waits (the home registry never does:
        it is loaded when next asked for enough)."""

    def run(self, fn: Callable[..., T], *args: object) -> T:
        return fn(*args)

    def drop_all(self) -> None:
        """Drop every e-graph, on this thread."""
        for rr in [*self.rules.values(), *self.background, *self.renewals.values()]:
            rr.discard()
        self.background.clear()
        self.renewals.clear()
        self.rules.clear()

    def renew(self, old: ResidentRules) -> None:
        """Load a fresh copy of a set in the background, to take its place (`current`): egglog keeps a report of
        every iteration an e-graph ever ran (about 0.1 MB a program), which only dropping the e-graph lets go of."""
        fresh = ResidentRules(list(old.rule_files), old.load)
        fresh.key = old.key
        self.renewals[old.key] = fresh
        self.load_later(fresh)

    def current(self, key: Hashable) -> ResidentRules | None:
        """The set kept under `key`, or the fresh copy that takes its place once loaded; a copy still loading
        `_RENEW_WAIT` programs after it was asked for is loaded at once."""
        old = self.rules.get(key)
        fresh = self.renewals.get(key)
        if old is None or fresh is None or old.in_use:
            return old
        if not fresh.ready and old.served >= _RECYCLE + _RENEW_WAIT:
            if fresh in self.background:
                self.background.remove(fresh)
            with contextlib.suppress(BaseException):
                fresh.finish()
        if not fresh.ready and not fresh.broken:
            return old
        del self.renewals[key]
        if fresh.broken:
            fresh.discard()
            return old
        self.rules[key] = fresh
        old.discard()
        return fresh

    def make_room(self, force: bool) -> bool:
        """Room for one more loaded set: idle sets over `_MAX_LOADED` are dropped, least recently used first. Unless
        `force`d (for the set of every rule, which any program can run on), only sets no program used for `_STALE`
        programs go: kinds that take turns would otherwise push each other's sets out and load them again, each
        load costing 30-120 ms where running on a loaded set that holds its rules costs a kind 4-20 % more
        instructions. Whether there is room now."""
        excess = len(self.rules) + 1 - _MAX_LOADED
        if excess <= 0:
            return True
        idle = [
            k
            for k, v in self.rules.items()
            if not v.in_use and v not in self.background and (force or self.tick - v.last_used >= _STALE)
        ]
        for oldest in idle[:excess]:
            self.rules.pop(oldest).discard()
        return len(self.rules) < _MAX_LOADED


class _Home(_Registry):
    """The main thread's own e-graphs. A pass called on the main thread runs there and then: handing it to
    another thread costs a wake-up of that thread (0.3-1 ms after the caller did other work, measured), more
    than what it could do meanwhile for a small program (the reset, which the next program on the set does
    first instead). Nothing loads in the background here: a set a kind of program asks for three times is
    loaded then (see `ready_rules`). The main thread drops its e-graphs at exit (atexit runs on it)."""

    def __init__(self) -> None:
        super().__init__(threading.main_thread())
        atexit.register(self.drop_all)


class _Owner(_Registry):
    """The thread that makes, uses and drops the e-graphs of the pass's calls from every thread but the main one.

    Loaded rules are kept for the life of the process, so they cannot belong to a caller's thread (a pool thread
    dies, and its objects are then freed by another); they live here instead, and are dropped here at exit. Work
    that need not hold up a caller (a program's reset) runs here once its caller has its answer, before the next
    job; sets load in the background while no caller waits.
    """

    def __init__(self) -> None:
        super().__init__(threading.Thread(target=self._serve, name="pypto-egg-egraph", daemon=True))
        self.loads_in_background = True
        self.jobs: queue.SimpleQueue[tuple[Callable[..., object] | None, tuple[object, ...], _Reply]] = (
            queue.SimpleQueue()
        )
        self.deferred: list[Callable[[], None]] = []
        self.thread.start()
        atexit.register(self.shutdown)

    def _serve(self) -> None:
        while True:
            if self.background and self.jobs.empty():
                self._load_a_slice()
                continue
            fn, args, reply = self.jobs.get()
            if fn is None:  # shutdown: the e-graphs are dropped here, on the thread that made them
                self._run_deferred()
                self.drop_all()
                reply.put((True, None))
                self._refuse_queued()
                return
            try:
                result: tuple[bool, object] = (True, fn(*args))
            except BaseException as e:
                result = (False, _detached(e))
            reply.put(result)
            del result
            self._run_deferred()

    def _refuse_queued(self) -> None:
        """Jobs that reached this owner after its shutdown are answered: their callers' next call finds a new one."""
        while not self.jobs.empty():
            _, _, waiting = self.jobs.get_nowait()
            waiting.put(
                (False, InternalError("the pass's e-graph thread was released before a fork; call again"))
            )

    def _run_deferred(self) -> None:
        while self.deferred:
            # a failure marks its e-graph broken, to be loaded again when next used; no caller waits for it
            with contextlib.suppress(BaseException):
                self.deferred.pop(0)()

    def _load_a_slice(self) -> None:
        loading = self.background[0]
        with contextlib.suppress(BaseException):  # (a failure marks the set broken)
            if loading.advance():
                return
        self.background.pop(0)

    def after(self, fn: Callable[[], None]) -> None:
        self.deferred.append(fn)

    def load_later(self, rr: ResidentRules) -> None:
        self.background.append(rr)

    def run(self, fn: Callable[..., T], *args: object) -> T:
        if threading.current_thread() is self.thread:
            return fn(*args)
        reply = _reply_channel()
        self.jobs.put((fn, args, reply))
        ok, value = reply.get()
        if ok:
            return value  # type: ignore[return-value]
        assert isinstance(value, BaseException)
        raise value

    def shutdown(self) -> None:
        if os.getpid() == self.pid and self.thread.is_alive():
            reply: _Reply = queue.SimpleQueue()
            self.jobs.put((None, (), reply))
            reply.get(timeout=60)


def _detached(e: BaseException) -> BaseException:
    """The error without its frames (kept as text in a note): they hold this thread's e-graphs, which the caller's
    thread must not be the last to let go of."""
    seen: set[int] = set()
    x: BaseException | None = e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if x.__traceback__ is not None:
            x.add_note("".join(traceback.format_tb(x.__traceback__)).rstrip())
            x.__traceback__ = None
        x = x.__cause__ or x.__context__
    return e


_Reply = queue.SimpleQueue[tuple[bool, object]]
_CHANNELS = threading.local()


def _reply_channel() -> _Reply:
    """The calling thread's channel for answers from the owner (a queue, not a Future: a Future's condition
    costs a caller about 0.25 ms a call in wake-ups, a queue a fifth of it)."""
    channel: _Reply | None = getattr(_CHANNELS, "reply", None)
    if channel is None:
        channel = _CHANNELS.reply = queue.SimpleQueue()
    return channel


_OWNER: _Owner | None = None
_HOME: _Home | None = None
_OWNER_LOCK = threading.Lock()


def owner() -> _Owner:
    """The thread that runs the pass for callers on threads other than the main one."""
    global _OWNER
    with _OWNER_LOCK:
        if _OWNER is None or _OWNER.pid != os.getpid():
            _OWNER = _Owner()
        return _OWNER


def home() -> _Home:
    """The main thread's registry."""
    global _HOME
    with _OWNER_LOCK:
        if _HOME is None or _HOME.pid != os.getpid():
            _HOME = _Home()
        return _HOME


def release_before_fork() -> None:
    """A child process inherits no e-graph: egglog cannot run in a process forked after it ran (its worker
    threads are not forked), and dropping an inherited e-graph there would hang. So before a fork the process
    drops its resident e-graphs, each on the thread that made it: the owner thread's (it is asked to, and ends),
    and the main thread's when the main thread forks. They are loaded again when next asked for. (Registered with
    `os.register_at_fork` when the first registry is made; `subprocess` without `preexec_fn` forks no Python.)"""
    global _OWNER, _HOME
    own, here = _OWNER, _HOME
    if own is not None and own.pid == os.getpid() and threading.current_thread() is not own.thread:
        own.shutdown()
        _OWNER = None
    if here is not None and here.pid == os.getpid() and threading.current_thread() is threading.main_thread():
        here.drop_all()
        _HOME = None


def registry() -> _Registry:
    """The registry of the calling thread: the main thread's own, or the owner thread's."""
    if threading.current_thread() is threading.main_thread():
        return home()
    own = owner()
    if threading.current_thread() is not own.thread:
        raise RuntimeError("the shared rules may only be used on the e-graph owner thread (see run_on_owner)")
    return own


def run_on_owner(fn: Callable[..., T], *args: object) -> T:
    """Run `fn` where the calling thread's e-graphs live: on the main thread itself, on the owner thread for any
    other (directly when already there)."""
    if threading.current_thread() is threading.main_thread():
        return fn(*args)
    return owner().run(fn, *args)


def resident_rules(
    rule_files: Sequence[RuleFile], load: Loader | None = None, key: Hashable | None = None
) -> ResidentRules:
    """The owner thread's e-graph for these rule files, loaded and type-checked on first use (by `load`, or file
    by file), whole. Sets are kept under `key`, by default their text; the least recently used of more than
    `_MAX_LOADED` is dropped (on this thread, which made it), and so is one a failed program left broken."""
    own = _owner_here()
    key = _key(rule_files) if key is None else key
    own.current(key)
    loaded = own.rules.pop(key, None)
    if loaded is None or loaded.broken:
        if loaded is not None:
            loaded.discard()
        loaded = ResidentRules(list(rule_files), load)
        loaded.key = key
        own.make_room(force=True)
    own.rules[key] = loaded  # most recently used last
    loaded.last_used = own.tick
    loaded.finish()
    return loaded


def ready_rules(
    key: Hashable, rule_files: Callable[[], Sequence[RuleFile]], load: Loader | None = None
) -> ResidentRules | None:
    """The owner thread's e-graph of the rule files `key` names if it is loaded whole, else None. A kind of program
    that keeps coming back is worth its own set: on the owner thread its loading (of `rule_files()`) starts in the
    background when first asked for, a slice at a time while no caller waits; asked for `_PROMOTE` times before
    that is done (on the main thread, which loads nothing in the background: asked for `_PROMOTE` times), it is
    loaded at once, a stall of 30-120 ms once. A set is made only when there is room for it (`make_room`)."""
    own = _owner_here()
    own.tick += 1
    loaded = own.current(key)
    if loaded is not None and loaded.broken:
        loaded.discard()
        if loaded in own.background:
            own.background.remove(loaded)
        del own.rules[key]
        loaded = None
    if loaded is None:
        if (own.ask(key) < _PROMOTE and not own.loads_in_background) or not own.make_room(force=False):
            return None
        own.rules[key] = loaded = ResidentRules(rule_files, load)
        loaded.key = key
        own.load_later(loaded)
    else:
        own.rules[key] = own.rules.pop(key)  # most recently used last
        if not loaded.ready:
            own.ask(key)
    loaded.last_used = own.tick
    if not loaded.ready:
        if own.asked.get(key, 0) < _PROMOTE:
            return None
        if loaded in own.background:
            own.background.remove(loaded)
        loaded.finish()
        own.asked.pop(key, None)
    return loaded


def smallest_ready(size_within: Callable[[Hashable], int | None]) -> ResidentRules | None:
    """Of the loaded, idle sets, the one whose key `size_within` sizes smallest (None: that set does not serve)."""
    own = _owner_here()
    best: tuple[int, Hashable] | None = None
    for key, rr in own.rules.items():
        if not rr.ready or rr.in_use or rr.broken:
            continue
        size = size_within(key)
        if size is not None and (best is None or size < best[0]):
            best = (size, key)
    if best is None:
        return None
    found = own.current(best[1])  # (a fresh copy may take its place, see `_Registry.renew`)
    if found is None or not found.ready or found.in_use or found.broken:
        return None
    own.rules[best[1]] = own.rules.pop(best[1])  # most recently used last
    found.last_used = own.tick
    return found


def _key(rule_files: Sequence[RuleFile]) -> tuple[tuple[str, str], ...]:
    return tuple((str(rf.path), rf.text) for rf in rule_files)


def _owner_here() -> _Registry:
    return registry()


_PROMOTE = 3  # programs of a kind that ask for its own set before it is loaded at once
_STALE = 100  # programs after which a set none of them used may make room for another
_MAX_ASKED = 4096  # kinds whose asks are counted at a time
_RENEW_WAIT = 100  # programs a fresh copy may load in the background before it is loaded at once
_RECYCLE = 500  # programs a set runs before a fresh copy takes its place (see _Owner.renew)
# rule sets kept loaded per process (each 10-20 MB, and up to 40 MB of reports before renewal): the families'
# two (rule_sets.py), the narrowing rules' and six kinds' own
_MAX_LOADED = 9
