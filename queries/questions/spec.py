"""What a question set is asked to be: :class:`QuestionSpec`, the options of ``make_questions`` as one typed value.

Kept apart from the generator so a caller (the CLI, the demo, a bench, a user's script) can build,
check and record a request without reading any graph; :meth:`QuestionSpec.check` refuses a bad
option with one line before any work. The spec goes down whole: the generator
(:mod:`eventkg.queries.questions.generate`) and the builders (:mod:`eventkg.queries.questions.build`) read
their options from it.
"""

from __future__ import annotations

import warnings
from dataclasses import KW_ONLY, InitVar, dataclass

from eventkg.graphstore.model import check_event_level
from eventkg.queries.errors import QuestionError
from eventkg.queries.questions.rows import TASKS

NEGATIVES = ("faiss", "random")


@dataclass(frozen=True)
class QuestionSpec:
    """One request for EV²-style questions.

    Args:
        task: ``cec`` or ``crr``.
        level: ``schema`` or ``instance``.
        n: How many questions to ask for (fewer come when the graph yields fewer; the notice says why).
        seed: Same graph, same seed: same questions.
        negatives: CEC distractors from the store's FAISS index (``faiss``) or drawn from the graph (``random``).
        embed_model: The sentence-embedding model of ``faiss`` negatives and of ``similar`` (None: the configured one).
        size: Component size N of Algorithm 1 (walks keep N..N+2 nodes).
        save: Also write the questions as ``Question`` nodes of the store.
        max_len: Longest relation path, in edges, that may prove an answer.
        pairs: Candidate pairs tried per component.
        vague_prob: CRR's share of Vague pairs, relative to related ones.
        require_context: Skip a question whose context would be empty.
        repeat: Let the same (event, relation, answer) be asked again.
        one_story: Instance level: a question's texts all from one story's instances.
        similar: CEC negatives also within a band of the answer's similarity to the queried event, as often
            below it as above, and CRR Vague partners within the band of the related partner's (None: when the graph's linked events are few enough to encode,
            ``balance.SIMILAR_AUTO_MAX``).
        adversarial: CEC over-generated twice and filtered of what the audit's baselines solve.
        model: Deprecated spelling of ``embed_model``, a keyword of the constructor only (a
            ``DeprecationWarning``; no field of that name); it goes in the next release.
    """

    task: str
    level: str = "schema"
    n: int = 100
    seed: int = 0
    negatives: str = "faiss"
    embed_model: str | None = None
    size: int = 3
    save: bool = False
    max_len: int = 4
    pairs: int = 3
    vague_prob: float = 0.5
    require_context: bool = True
    repeat: bool = False
    one_story: bool = False
    similar: bool | None = None
    adversarial: bool = False
    _: KW_ONLY
    model: InitVar[str | None] = None

    def __post_init__(self, model: str | None) -> None:
        if model is not None:
            warnings.warn("QuestionSpec(model=...) is deprecated: use embed_model=; model goes in the next release",
                          DeprecationWarning, stacklevel=3)
            object.__setattr__(self, "embed_model", self.embed_model or model)

    def check(self) -> str:
        """Refuse a bad option in one line, before any work.

        Returns:
            The task upper-cased (``CEC`` or ``CRR``).

        Raises:
            QuestionError: An unknown task, level or negatives kind, a negative ``n``, or filtering asked of CRR.
        """
        task = self.task.upper()
        if task not in TASKS:
            raise QuestionError(f"task {self.task!r}: expected cec or crr")
        check_event_level(self.level, QuestionError, optional=False)
        if self.negatives not in NEGATIVES:
            raise QuestionError(f"negatives {self.negatives!r}: expected faiss or random")
        if self.n < 0:
            raise QuestionError("n must not be negative")
        if self.adversarial and task != "CEC":
            raise QuestionError("adversarial filtering (--filter) is for CEC questions: it drops what the choice "
                                "baselines solve, and CRR's choices are the relation names")
        return task

