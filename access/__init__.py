"""Who is calling and what they may see: bearer tokens and JWTs resolved to a `Caller`, the
one policy that turns a caller into visibility filters or a 403 (domain/errors.py)."""
