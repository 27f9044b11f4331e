"""The Quart application serving both pattern controllers."""

from __future__ import annotations

from quart import Quart

from dex_idiom.app import ExampleApp
from dex_idiom.patterns.hash_partitioned_attribute_map.controller import (
    create_hash_partitioned_attribute_map_blueprint,
)
from dex_idiom.patterns.sequentially_chunked_attribute_map.controller import (
    create_sequentially_chunked_attribute_map_blueprint,
)


def create_http_app(app_state: ExampleApp) -> Quart:
    app = Quart(__name__)
    app.register_blueprint(create_sequentially_chunked_attribute_map_blueprint(app_state))
    app.register_blueprint(create_hash_partitioned_attribute_map_blueprint(app_state))
    return app
