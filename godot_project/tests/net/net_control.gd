extends Node
## The multiplayer test's own messages (not part of the addon): the server tells a client to
## misbehave.

signal hostile_requested


@rpc("authority", "call_remote", "reliable")
func go_hostile() -> void:
	hostile_requested.emit()
