"""Accounts: users with hashed passwords and roles, API tokens and web UI sessions.

Exports ``accounts`` (create, list, delete users; passwords, roles; authenticate; tokens) and
``passwords`` (argon2id hashing).
"""
