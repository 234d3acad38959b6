extends TestCase
## Self-test of the harness: checks pass and fail as documented, wait helpers work.

signal _ping(a: int, b: String)
signal _never


func _fresh() -> TestCase:
	var t := TestCase.new()
	t.echo_failures = false
	add_child(t)
	return t


func test_check_passes_and_fails() -> void:
	var t := _fresh()
	check(t.check(true, "true passes"), "check(true) returns true")
	check_eq(t.failures.size(), 0, "no failure after check(true)")
	check(not t.check(false, "expected failure A"), "check(false) returns false")
	check_eq(t.failures.size(), 1, "one failure after check(false)")
	check(t.failures[0].contains("expected failure A"), "failure keeps the message")
	check_eq(t.checks, 2, "both checks counted")
	t.free()


func test_check_eq() -> void:
	var t := _fresh()
	check(t.check_eq(3, 3, "ints"), "equal ints pass")
	check(t.check_eq(2, 2.0, "int vs float"), "numerically equal int/float pass")
	check(t.check_eq([1, 2], [1, 2], "arrays"), "equal arrays pass")
	check(t.check_eq("a", &"a", "string vs stringname"), "String == StringName passes")
	check_eq(t.failures.size(), 0, "no failures for equal values")
	check(not t.check_eq(3, 4, "ints differ"), "3 != 4 fails")
	check(not t.check_eq("3", 3, "type differs"), "String vs int fails without a script error")
	check(not t.check_eq(Vector3(1, 2, 3), Vector3(1, 2, 4), "vectors differ"), "different vectors fail")
	check_eq(t.failures.size(), 3, "three failures recorded")
	check(t.failures[0].contains("got 3") and t.failures[0].contains("expected 4"), "failure shows actual values: " + t.failures[0])
	t.free()


func test_check_near() -> void:
	var t := _fresh()
	check(t.check_near(1.0, 1.05, 0.1, "close"), "within tolerance passes")
	check(t.check_near(-2.0, -2.0, 0.0, "exact"), "exact with zero tolerance passes")
	check(not t.check_near(1.0, 1.2, 0.1, "far"), "outside tolerance fails")
	check(not t.check_near(NAN, 0.0, 1e9, "nan"), "NaN fails")
	check_eq(t.failures.size(), 2, "two failures recorded")
	check(t.failures[0].contains("1.2"), "failure shows the expected value: " + t.failures[0])
	t.reset_checks()
	check_eq(t.checks, 0, "reset clears the count")
	check_eq(t.failures.size(), 0, "reset clears failures")
	t.free()


func test_wait_frames() -> void:
	var f0 := Engine.get_process_frames()
	await wait_frames(3)
	check(Engine.get_process_frames() - f0 >= 3, "wait_frames(3) waited at least 3 frames")


func test_wait_signal_returns_args() -> void:
	_emit_later.call_deferred()
	var args := await wait_signal(self, "_ping", 5.0)
	check_eq(args, [7, "x"], "signal arguments returned")
	check_eq(failures.size(), 0, "no failure recorded on success")


func _emit_later() -> void:
	await get_tree().process_frame
	_ping.emit(7, "x")


func test_wait_signal_timeout_records_failure() -> void:
	var t := _fresh()
	var args := await t.wait_signal(self, "_never", 0.1)
	check_eq(args, [], "timeout returns []")
	check_eq(t.failures.size(), 1, "timeout recorded as a failure")
	var bad := await t.wait_signal(self, "no_such_signal", 0.1)
	check_eq(bad, [], "unknown signal returns []")
	check_eq(t.failures.size(), 2, "unknown signal recorded as a failure")
	t.free()
