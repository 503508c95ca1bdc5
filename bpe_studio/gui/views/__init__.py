"""The app's four live views, one module each: merge list, pair chart, vocabulary table and
token editor."""
