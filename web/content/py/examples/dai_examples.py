"""Driverless AI engine examples for the ai_engine_manager client.

Run against a server started with `npm start`:

    export PYTHONPATH=clients/python
    AIEM_URL=http://127.0.0.1:8080 AIEM_TOKEN=$(npm run -s token -- --user alice) \
      python3 web/content/py/examples/dai_examples.py

The catalogue needs a Driverless AI profile `default` and a version with the alias `latest` in
the workspace `global` (see Administration in the documentation).
"""

import os

# [START login]
from ai_engine_manager import login

clients = login(
    url=os.environ.get("AIEM_URL", "http://127.0.0.1:8080"),
    token=os.environ["AIEM_TOKEN"],
)
dai = clients.dai_engine_client
# [END login]

# [START create]
engine = dai.create_engine(
    workspace_id="default",
    engine_id="churn-model",
    display_name="Churn model",
    profile="workspaces/global/daiEngineProfiles/default",
    dai_engine_version="workspaces/global/daiEngineVersions/latest",
    cpu=4,
    memory_bytes="16Gi",
    storage_bytes="64Gi",
    max_idle_duration="2h",
    max_running_duration="1d",
    annotations={"team": "retention"},
)
# Returns at once; wait() polls until the engine runs (or raises if it fails).
engine.wait()
print(engine.state, engine.login_url)
# [END create]

# [START list]
page = dai.list_engines(
    workspace_id="default",
    page_size=20,
    order_by="display_name",
    filter='state = STATE_RUNNING AND display_name = "Churn*"',
)
for e in page.dai_engines:
    print(e.name, e.display_name, e.cpu, e.memory_bytes)
print("more pages" if page.next_page_token else "last page", page.total_size)
# [END list]

# [START get]
engine = dai.get_engine(workspace_id="default", engine_id="churn-model")
print(engine.state, engine.reconciling, engine.current_idle_duration)
# [END get]

# [START pause-resume]
engine.pause()
engine.wait()
print(engine.state)  # DAIEngineState.STATE_PAUSED: the data disk is kept

engine.resume()
engine.wait()
print(engine.state)  # DAIEngineState.STATE_RUNNING
# [END pause-resume]

# [START update]
# An engine's settings change while it is paused (or failed).
engine.pause()
engine.wait()
engine.display_name = "Churn model (Q3)"
engine.max_idle_duration = "4h"
engine.update(update_mask="display_name,max_idle_duration")
engine.resume()
engine.wait()
# [END update]

# [START resize]
# Storage only grows; the engine reports storage_resizing until the new size is in place.
engine.resize_storage(new_storage="128Gi")
print(engine.storage_resizing)
# [END resize]

# [START upgrade]
if engine.upgrade_available:
    engine.upgrade_dai_engine_version(
        new_dai_engine_version="workspaces/global/daiEngineVersions/latest",
    )
# [END upgrade]

# [START logs]
logs = engine.download_logs()
print(logs[-2000:])
# [END logs]

# [START delete]
engine.delete()
# [END delete]
