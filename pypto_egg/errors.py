"""One exception hierarchy for the whole toolkit."""

from __future__ import annotations


class PyptoEggError(Exception):
    """Base of every error this package raises on purpose."""


class UserError(PyptoEggError, ValueError):
    """Input the toolkit cannot accept; the message says what to change."""


class DSLError(UserError):
    """A `pl` program that does not parse; the message starts with file:line:col."""


class TypeDeductionError(UserError):
    """An op applied to operands whose types it does not accept."""


class RefusedType(TypeDeductionError):
    """A deduction PyPTO's own reader refuses too, for the reason it gives (a dtype an op does not take, a read
    past its tensor): a function holding one is refused, never kept as its text."""


class RefusedProgram(DSLError):
    """A `pl` program PyPTO's own reader refuses too (a `RefusedType`, an annotation whose dtype is not its
    value's), located: never kept as its text."""


class PassError(UserError):
    """A program the pass cannot lower (a precondition or a lowering limit)."""


class InternalError(PyptoEggError, RuntimeError):
    """A compiler bug: an invariant the pass relies on did not hold."""


class VerificationError(PyptoEggError, ValueError):
    """A property verifier (e.g. TileOps2D) rejected a program."""


class RuleError(UserError):
    """A rules file egglog could not load; names the file, the line and egglog's message."""


class ScheduleLimitError(UserError):
    """Saturation stopped at a limit (iterations, e-nodes or time) before reaching a fixpoint."""


class UnmatchedRuleWarning(UserWarning):
    """A user's rule matched nothing in a run: a misspelt relation or op name, most often (the message says which
    atom of its query nothing satisfied)."""
