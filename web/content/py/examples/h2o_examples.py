"""H2O engine examples for the ai_engine_manager client.

Run against a server started with `npm start`:

    export PYTHONPATH=clients/python
    AIEM_URL=http://127.0.0.1:8080 AIEM_TOKEN=$(npm run -s token -- --user alice) \
      python3 web/content/py/examples/h2o_examples.py

The catalogue needs an H2O profile `default` and a version with the alias `latest` in the
workspace `global`.
"""

import os

from ai_engine_manager import login

clients = login(
    url=os.environ.get("AIEM_URL", "http://127.0.0.1:8080"),
    token=os.environ["AIEM_TOKEN"],
)

# [START size]
h2o_client = clients.h2o_engine_client
size = h2o_client.calculate_h2o_engine_size_raw_dataset(
    dataset_size_bytes="20Gi",
    memory_bytes_per_node_min="4Gi",
    memory_bytes_per_node_max="64Gi",
    node_count_min=1,
    node_count_max=8,
)
print(size.node_count, size.memory_bytes)  # for example 2 and "50Gi"
# [END size]

# [START create]
engine = h2o_client.create_engine(
    workspace_id="default",
    engine_id="fraud-features",
    display_name="Fraud features",
    profile="workspaces/global/h2oEngineProfiles/default",
    h2o_engine_version="workspaces/global/h2oEngineVersions/latest",
    node_count=size.node_count,
    cpu=4,
    memory_bytes=size.memory_bytes,
    max_idle_duration="1h",
    max_running_duration="8h",
)
engine.wait()
print(engine.state, engine.api_url)
# [END create]

# [START list]
for e in h2o_client.list_all_engines(workspace_id="default", filter="node_count >= 2"):
    print(e.name, e.state, e.node_count)
# [END list]

# [START terminate]
engine.terminate()
engine.wait()
print(engine.state)  # H2OEngineState.STATE_TERMINATED: it cannot be started again
engine.delete()
# [END terminate]
