"""Event texts as vectors: embedding them, storing them once per model, and FAISS indexes over them.

``embeddings`` loads the offline sentence model; ``encode`` embeds in resumable chunks; ``store``
keeps one vectors file per (store, model); ``faiss_build`` and ``compressed`` build the index
kinds; ``files`` says where they live; ``index`` is the index a store's levels are searched with.
"""
