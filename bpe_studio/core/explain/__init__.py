"""Explaining a tokenizer: encode steps, merge trees and reachability (``steps``), the spans
the editor colours (``spans``, ``span_steps``), compression curves over a run
(``compression``) and the comparison report (``report``)."""
