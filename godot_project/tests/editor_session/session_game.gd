extends Node
## The scene the real-editor check runs from the editor (Run Custom Scene): it proves the game
## process started by writing which executable runs it, then quits.


func _ready() -> void:
	var f := FileAccess.open("user://session_game_ran.txt", FileAccess.WRITE)
	f.store_string(OS.get_executable_path())
	f.close()
	get_tree().quit()
