"""The conformance probe: what a PrivateUse1 backend gets from each slice.

``python -m rfc_shared.conformance`` probes every site the RFCs name against
the torch the overlay serves in this process; ``--matrix`` runs itself once
per column (stock, each slice alone, stacked) and prints one table.
"""
