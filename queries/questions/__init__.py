"""CEC and CRR questions from the event graph (the EV² paper, section 3), in EV²'s JSON-lines schema.

One entry point, :func:`~eventkg.queries.questions.make.make_questions` (``eventkg questions`` and
the demo call it): ``generate`` samples components and drafts, ``build`` (what both tasks share),
``cec`` and ``crr`` turn a component into questions (Table 1 relation, context, vetted negatives,
quotas), ``balance`` holds what a negative is matched to the answer on, ``rows`` says what a question
is, ``store`` writes them as JSON lines or ``Question`` nodes.
"""
