extends SceneTree
## GDScript test runner:
##   godot --headless --path godot_project -s res://tests/run_tests.gd [-- --filter=substring]
##
## Loads every `res://tests/test_*.gd` (sorted). For each method named `test_*` (sorted) a fresh
## instance is created and added to `root`; `before_each()` (if present) runs, then the test
## (awaited: tests may be coroutines), then `after_each()` (if present), then the instance is freed.
## Prints `PASS <file>::<test>` / `FAIL <file>::<test>: <messages>` and finally `N passed, N failed`;
## exits with 0 when nothing failed, 1 otherwise. A test that records no check fails ("no assertions").

const TEST_DIR := "res://tests"
## Default per-test time limit; a test script may override it with `var timeout_s := ...`.
const DEFAULT_TIMEOUT_S := 300.0

var _passed := 0
var _failed := 0
var _filter := ""
## Captures engine/script errors (Godot 4.5+ `Logger`); null on older engines.
var _logger: RefCounted = null

const LOGGER_SOURCE := """
extends Logger
var _mutex := Mutex.new()
var _entries: Array = []

func _log_error(function: String, file: String, line: int, code: String, rationale: String, editor_notify: bool, error_type: int, script_backtraces: Array) -> void:
	if error_type == 1: # ERROR_TYPE_WARNING
		return
	var text := rationale if rationale != "" else code
	_mutex.lock()
	_entries.append([error_type, text, "%s:%d" % [file, line]])
	_mutex.unlock()

func _log_message(message: String, error: bool) -> void:
	pass

func take() -> Array:
	_mutex.lock()
	var e := _entries
	_entries = []
	_mutex.unlock()
	return e
"""


func _initialize() -> void:
	for arg in OS.get_cmdline_user_args():
		if arg.begins_with("--filter="):
			_filter = arg.substr("--filter=".length())
	if ClassDB.class_exists("Logger") and OS.has_method("add_logger"):
		var script := GDScript.new()
		script.source_code = LOGGER_SOURCE
		if script.reload() == OK:
			_logger = script.new()
			OS.call("add_logger", _logger)
	_run.call_deferred()


func _test_files() -> PackedStringArray:
	var files := PackedStringArray()
	var dir := DirAccess.open(TEST_DIR)
	if dir == null:
		printerr("run_tests: cannot open %s (error %d)" % [TEST_DIR, DirAccess.get_open_error()])
		return files
	for f in dir.get_files():
		# Exported projects list scripts as *.gd.remap; the source name is what we load.
		var name := f.trim_suffix(".remap")
		if name.begins_with("test_") and name.ends_with(".gd") and not files.has(name):
			files.append(name)
	files.sort()
	return files


func _test_methods(script: Script) -> PackedStringArray:
	var names := PackedStringArray()
	for m in script.get_script_method_list():
		var n: String = m.name
		if n.begins_with("test_") and not names.has(n):
			names.append(n)
	names.sort()
	return names


func _report(id: String, failures: PackedStringArray) -> void:
	if failures.is_empty():
		_passed += 1
		print("PASS ", id)
	else:
		_failed += 1
		print("FAIL ", id, ": ", "; ".join(failures))


func _run() -> void:
	var files := _test_files()
	if files.is_empty():
		printerr("run_tests: no test_*.gd files in ", TEST_DIR)
		_failed += 1
	for file in files:
		var path := TEST_DIR.path_join(file)
		var script := load(path) as Script
		if script == null or not script.can_instantiate():
			_report(file + "::<load>", PackedStringArray(["cannot load or instantiate " + path]))
			continue
		for method in _test_methods(script):
			var id := "%s::%s" % [file, method]
			if _filter != "" and not id.contains(_filter):
				continue
			await _run_one(script, method, id)
	if _logger != null:
		OS.call("remove_logger", _logger)
		_logger = null
	print("%d passed, %d failed" % [_passed, _failed])
	quit(0 if _failed == 0 else 1)


func _run_one(script: Script, method: String, id: String) -> void:
	var inst: Object = script.new()
	if not (inst is TestCase):
		_report(id, PackedStringArray(["%s does not extend TestCase" % script.resource_path]))
		if inst is Node:
			inst.free()
		return
	var test := inst as TestCase
	test.name = method
	var before := root.get_children()
	root.add_child(test)
	test.reset_checks()
	var timeout_s := DEFAULT_TIMEOUT_S
	var t: Variant = test.get("timeout_s")
	if typeof(t) == TYPE_FLOAT or typeof(t) == TYPE_INT:
		timeout_s = float(t)

	if _logger != null:
		_logger.take() # errors outside tests are left to the output check of `cargo xtask test`
	var finished := true
	if test.has_method("before_each"):
		finished = await _call_with_timeout(test, "before_each", timeout_s)
	if finished:
		finished = await _call_with_timeout(test, method, timeout_s)
	if finished and test.has_method("after_each"):
		finished = await _call_with_timeout(test, "after_each", timeout_s)

	if _logger != null:
		_attribute_errors(test, _logger.take())
	var failures := test.failures.duplicate()
	if not finished:
		failures.append("timed out after %.0f s" % timeout_s)
	elif test.checks == 0 and failures.is_empty():
		failures.append("no assertions")
	_report(id, failures)

	# Free the instance and anything the test left at the root, then let queued frees run.
	root.remove_child(test)
	test.free()
	for n in root.get_children():
		if not before.has(n):
			n.queue_free()
	await process_frame
	await process_frame


## Calls `obj.method()` (awaiting it if it is a coroutine). Returns false if it did not finish in time.
func _call_with_timeout(obj: Object, method: String, timeout_s: float) -> bool:
	var state := {"done": false}
	var runner := func() -> void:
		await obj.call(method)
		state.done = true
	runner.call()
	var deadline := Time.get_ticks_msec() + int(timeout_s * 1000.0)
	while not state.done:
		if Time.get_ticks_msec() >= deadline:
			return false
		await process_frame
	return true


## Script errors always fail the test; engine errors fail it unless declared with `expect_error`.
## Declared errors are echoed as `EXPECTED-ERROR: <text>` on stderr (the output check accepts an
## `ERROR: <text>` line only when such a line exists).
func _attribute_errors(test: TestCase, entries: Array) -> void:
	var seen := {}
	for e in entries:
		var kind: int = e[0]
		var text: String = e[1]
		var matched := false
		if kind != 2: # not ERROR_TYPE_SCRIPT
			for pat in test.expected_errors:
				if text.contains(pat):
					matched = true
					seen[pat] = true
		if matched:
			printerr("EXPECTED-ERROR: ", text)
		else:
			test.fail("%s: %s (%s)" % ["script error" if kind == 2 else "unexpected error", text, e[2]])
	for pat in test.expected_errors:
		if not seen.has(pat):
			test.fail("expected an error containing '%s', none was raised" % pat)
