class_name TestCase
extends Node
## Base class for GDScript tests run by `res://tests/run_tests.gd`.
##
## Every method whose name starts with `test_` is a test; it may be a coroutine (use `await`).
## Optional hooks: `before_each()` and `after_each()` (run once per test instance, see runner).
## Checks return whether they passed; failures are recorded with the message and actual values.

## Failure messages recorded for the current test.
var failures: PackedStringArray = PackedStringArray()
## Number of checks (passing or failing) recorded for the current test.
var checks: int = 0
## Substrings of engine errors this test provokes on purpose (see `expect_error`).
var expected_errors: PackedStringArray = PackedStringArray()
## Print each failure as it happens (the runner also prints them on the FAIL line).
var echo_failures: bool = true


## Clear the recorded state (the runner calls this before each test).
func reset_checks() -> void:
	failures = PackedStringArray()
	checks = 0
	expected_errors = PackedStringArray()


## Declare that this test provokes an engine error (`push_error`, `godot_error!`, ...) whose text
## contains `substring`. Undeclared errors during a test fail it; when the engine can report errors
## to scripts (Godot 4.5+ `Logger`), a declared error that never happens also fails the test.
## Counts as a check.
func expect_error(substring: String) -> void:
	checks += 1
	expected_errors.append(substring)


## Record a failure (used by the runner for errors and timeouts).
func fail(msg: String) -> void:
	checks += 1
	_record_failure(msg)


func _record_failure(msg: String) -> void:
	failures.append(msg)
	if echo_failures:
		print("    check failed: ", msg)


## Passes when `cond` is true.
func check(cond: bool, msg: String) -> bool:
	checks += 1
	if not cond:
		_record_failure(msg)
	return cond


## Passes when `a == b` (same type family and value; arrays/dictionaries compared by content).
func check_eq(a: Variant, b: Variant, msg: String) -> bool:
	checks += 1
	var ok := false
	if typeof(a) == typeof(b) or (_is_number(a) and _is_number(b)) or (_is_string(a) and _is_string(b)):
		ok = a == b
	if not ok:
		_record_failure("%s (got %s, expected %s)" % [msg, _repr(a), _repr(b)])
	return ok


## Passes when |a - b| <= tol (NaN never passes).
func check_near(a: float, b: float, tol: float, msg: String) -> bool:
	checks += 1
	var ok := not is_nan(a) and not is_nan(b) and absf(a - b) <= tol
	if not ok:
		_record_failure("%s (got %s, expected %s ± %s)" % [msg, a, b, tol])
	return ok


## Await-able: `await wait_frames(3)` resumes after 3 process frames.
func wait_frames(n: int) -> void:
	for i in n:
		await get_tree().process_frame


## Await-able: waits until `cond.call()` is true, at most `max_frames` frames (work portioned by
## time per frame takes more frames on a loaded machine); returns whether it became true.
func wait_until(cond: Callable, max_frames: int = 600) -> bool:
	for i in max_frames:
		if cond.call():
			return true
		await get_tree().process_frame
	return cond.call()


## Await-able: waits for `obj.signal_name` and returns its arguments as an Array.
## On timeout records a failure and returns an empty Array.
func wait_signal(obj: Object, signal_name: String, timeout_s: float) -> Array:
	if obj == null or not obj.has_signal(signal_name):
		checks += 1
		_record_failure("wait_signal: %s has no signal '%s'" % [obj, signal_name])
		return []
	var state := {"done": false, "args": []}
	var sig := Signal(obj, signal_name)
	var catcher := func(a0: Variant = null, a1: Variant = null, a2: Variant = null, a3: Variant = null, a4: Variant = null, a5: Variant = null) -> void:
		if state.done:
			return
		state.done = true
		var all := [a0, a1, a2, a3, a4, a5]
		state.args = all.slice(0, _signal_arg_count(obj, signal_name))
	sig.connect(catcher, CONNECT_ONE_SHOT)
	var deadline := Time.get_ticks_msec() + int(timeout_s * 1000.0)
	while not state.done and Time.get_ticks_msec() < deadline:
		await get_tree().process_frame
	if not state.done:
		if is_instance_valid(obj) and sig.is_connected(catcher):
			sig.disconnect(catcher)
		checks += 1
		_record_failure("wait_signal: '%s' not emitted within %.1f s" % [signal_name, timeout_s])
		return []
	return state.args


static func _signal_arg_count(obj: Object, signal_name: String) -> int:
	for s in obj.get_signal_list():
		if s.name == signal_name:
			return s.args.size()
	return 0


static func _is_number(v: Variant) -> bool:
	return typeof(v) == TYPE_INT or typeof(v) == TYPE_FLOAT


static func _is_string(v: Variant) -> bool:
	return typeof(v) == TYPE_STRING or typeof(v) == TYPE_STRING_NAME


static func _repr(v: Variant) -> String:
	if typeof(v) == TYPE_STRING:
		return '"%s"' % v
	return var_to_str(v) if typeof(v) != TYPE_OBJECT else str(v)
