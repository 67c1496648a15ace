"""What a person reads: the verdict, tables, the report, files written, a record's tests."""
