"""Notebook engine examples for the ai_engine_manager client.

Run against a server started with `npm start`:

    export PYTHONPATH=clients/python
    AIEM_URL=http://127.0.0.1:8080 AIEM_TOKEN=$(npm run -s token -- --user alice) \
      python3 web/content/py/examples/notebook_examples.py

The catalogue needs a notebook profile `default` and an enabled notebook image
in the workspace `global` (the demo catalogue has `default`).
"""

import os

from ai_engine_manager import FailedEngineException, login

clients = login(
    url=os.environ.get("AIEM_URL", "http://127.0.0.1:8080"),
    token=os.environ["AIEM_TOKEN"],
)
notebooks = clients.notebook_engine_client

# [START images]
for image in clients.notebook_engine_image_client.list_all_notebook_engine_images(parent="workspaces/global"):
    print(image.name, image.image, "enabled" if image.enabled else "disabled")
# [END images]

# [START create]
engine = notebooks.create_notebook_engine(
    parent="workspaces/default",
    notebook_engine_id="eda",
    profile="workspaces/global/notebookEngineProfiles/default",
    notebook_image="workspaces/global/notebookEngineImages/default",
    display_name="Exploratory analysis",
    cpu=2,
    memory_bytes="8Gi",
    storage_bytes="20Gi",
    max_idle_duration="1h",
)
engine.wait()
print("open", notebooks.access_notebook_engine(name=engine.name))
# [END create]

# [START manage]
engine.pause()
engine.wait()

engine.memory_bytes = "16Gi"
engine.update(update_mask="memory_bytes")

engine.resume()
try:
    engine.wait()
except FailedEngineException:
    # For example NotebookEngineFailureReason.FAILURE_REASON_OOM_KILLED.
    print(engine.failure_reason, engine.failure_message)
# [END manage]

# [START delete]
engine.delete()
# [END delete]
