"""What the library refuses or reports, as catalog messages: downloads (mha.fetch), stage files
(mha.artifacts), parameters (mha.config, mha.model, mha.data), training (mha.train) and the worked
example's verdicts (mha.verify). The texts are in ``errors.toml`` beside this file; a stage script words
them in its user's language (mha.stage_messages.tell), and ``str()`` of each is the English text.
"""

from __future__ import annotations

from mha.messages import Catalog

ERRORS = Catalog.load("mha", "errors.toml")
