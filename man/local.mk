# Man pages: one per command.
