"""The event graph in memory: the store's events and relations loaded in columns into integer
arrays (CSR), kept beside an embedded store, with ids, texts and scenario components.
"""
