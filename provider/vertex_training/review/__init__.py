"""Pull-request review of a stack change, with no engine and no cloud call: what the change
submits, replaces or deletes (``plan``), what the jobs may cost (``cost``, from the price
snapshot of ``vertex_training.catalog.prices``), and which of the team's rules they break
(``policies``).
"""
