"""Negative choices for CEC questions, by how they are found.

``nearest``: hard negatives, FAISS neighbours of the answer that Table 1 does not link to the
query; ``unlinked``: random events vetted against the graph; ``for_question``: the negatives of
one question named by text (``eventkg negatives``).
"""
