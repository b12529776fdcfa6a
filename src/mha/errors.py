"""The refusals mha.config, mha.lab.runs, mha.train, mha.model and mha.data raise as
``ERRORS.error(key, **values)``, worded from ``errors.toml``; the rest of the library raises plain English
where the problem is found."""

from __future__ import annotations

from mha.messages import Catalog, Message


class ERRORS(Message):
    catalog = Catalog.load("mha", "errors.toml")
