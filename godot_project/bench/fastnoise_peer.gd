## The peer of the noise and `regenerate()` goals, shared by `fastnoise_bench.gd` and
## `regenerate_bench.gd` so that both time the same thing: Godot's FastNoiseLite as the island's
## default fBm (Perlin, 8 octaves, lacunarity 2, gain 0.5, seed 7) with its first octave's
## wavelength 400 m on an N x N image of the 1024 m map.
extends RefCounted


static func make(n: int) -> FastNoiseLite:
	var noise := FastNoiseLite.new()
	noise.noise_type = FastNoiseLite.TYPE_PERLIN
	noise.fractal_type = FastNoiseLite.FRACTAL_FBM
	noise.fractal_octaves = 8
	noise.fractal_lacunarity = 2.0
	noise.fractal_gain = 0.5
	noise.seed = 7
	# One pixel is 1024 / (n - 1) metres; the first octave's wavelength is 400 m.
	noise.frequency = (1024.0 / float(n - 1)) / 400.0
	return noise
