# Figurines modelled from primitives and rendered with Cycles (our own work, CC0).
import bpy, math, sys
argv = sys.argv[sys.argv.index("--") + 1:]
scene_name, out = argv[0], argv[1]

def reset():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    s = bpy.context.scene
    s.render.engine = "CYCLES"
    s.cycles.samples = 96
    s.cycles.use_denoising = False
    try:
        s.cycles.denoiser = "OPENIMAGEDENOISE"
    except Exception:
        pass
    s.render.resolution_x, s.render.resolution_y = 560, 420
    s.render.film_transparent = False
    s.view_settings.view_transform = "Filmic"
    w = bpy.data.worlds.new("w"); s.world = w; w.use_nodes = True
    w.node_tree.nodes["Background"].inputs[0].default_value = (0.8, 0.8, 0.85, 1)
    w.node_tree.nodes["Background"].inputs[1].default_value = 0.4
    return s

def mat(name, rgb, rough=0.5, metal=0.0, spec=0.5):
    m = bpy.data.materials.new(name); m.use_nodes = True
    b = m.node_tree.nodes["Principled BSDF"]
    b.inputs["Base Color"].default_value = (*rgb, 1)
    b.inputs["Roughness"].default_value = rough
    b.inputs["Metallic"].default_value = metal
    return m

def wood(name, rgb):
    m = bpy.data.materials.new(name); m.use_nodes = True
    nt = m.node_tree; b = nt.nodes["Principled BSDF"]
    wave = nt.nodes.new("ShaderNodeTexWave"); wave.inputs["Scale"].default_value = 3; wave.inputs["Distortion"].default_value = 6
    ramp = nt.nodes.new("ShaderNodeValToRGB")
    ramp.color_ramp.elements[0].color = (rgb[0] * 0.6, rgb[1] * 0.6, rgb[2] * 0.6, 1)
    ramp.color_ramp.elements[1].color = (*rgb, 1)
    nt.links.new(wave.outputs["Fac"], ramp.inputs["Fac"]); nt.links.new(ramp.outputs["Color"], b.inputs["Base Color"])
    b.inputs["Roughness"].default_value = 0.45
    return m

def put(obj, m):
    obj.data.materials.append(m)
    bpy.ops.object.shade_smooth()
    return obj

def sphere(loc, r, m, scale=(1, 1, 1)):
    bpy.ops.mesh.primitive_uv_sphere_add(segments=48, ring_count=24, radius=r, location=loc)
    o = bpy.context.object; o.scale = scale; return put(o, m)

def cyl(loc, r, h, m, r2=None):
    if r2 is None:
        bpy.ops.mesh.primitive_cylinder_add(vertices=64, radius=r, depth=h, location=loc)
    else:
        bpy.ops.mesh.primitive_cone_add(vertices=64, radius1=r, radius2=r2, depth=h, location=loc)
    return put(bpy.context.object, m)

def floor_and_wall(floor_m, wall_m):
    bpy.ops.mesh.primitive_plane_add(size=30, location=(0, 0, 0)); put(bpy.context.object, floor_m)
    bpy.ops.mesh.primitive_plane_add(size=30, location=(0, 4, 0), rotation=(math.pi / 2, 0, 0)); put(bpy.context.object, wall_m)

def light(loc, energy, size=3):
    bpy.ops.object.light_add(type="AREA", location=loc); l = bpy.context.object
    l.data.energy = energy; l.data.size = size
    dx, dy, dz = -loc[0], -loc[1], 0.8 - loc[2]
    l.rotation_euler = (math.atan2(math.hypot(dx, dy), -dz), 0, math.atan2(dy, dx) + math.pi / 2)

def camera(loc, target, lens=50):
    bpy.ops.object.camera_add(location=loc); c = bpy.context.object; c.data.lens = lens
    d = [target[i] - loc[i] for i in range(3)]
    c.rotation_euler = (math.atan2(math.hypot(d[0], d[1]), -d[2]), 0, math.atan2(d[1], d[0]) - math.pi / 2)
    bpy.context.scene.camera = c

def kokeshi(x, y, body_rgb, h=1.6, s=1.0):
    black = mat("hair", (0.02, 0.02, 0.02), 0.3); skin = mat("face", (0.93, 0.82, 0.68), 0.4)
    cyl((x, y, h * s / 2), 0.32 * s, h * s, wood("body", body_rgb), r2=0.26 * s)
    for k, (zz, col) in enumerate([(0.25, (0.9, 0.75, 0.2)), (0.55, (0.1, 0.35, 0.15)), (0.85, (0.9, 0.75, 0.2))]):
        cyl((x, y, h * s * zz), (0.325 - 0.06 * zz) * s, 0.06 * s, mat("band%d" % k, col, 0.4))
    hz = h * s + 0.42 * s
    sphere((x, y, hz), 0.46 * s, skin)
    sphere((x, y + 0.06 * s, hz + 0.08 * s), 0.47 * s, black, scale=(1, 1, 0.9))  # hair cap, pushed back
    for ex in (-0.15, 0.15):
        sphere((x + ex * s, y - 0.43 * s, hz + 0.02 * s), 0.045 * s, black, scale=(1.6, 0.5, 0.6))
    sphere((x, y - 0.45 * s, hz - 0.17 * s), 0.035 * s, mat("mouth", (0.75, 0.08, 0.08), 0.3), scale=(1.4, 0.5, 0.8))
    for ex in (-0.27, 0.27):
        sphere((x + ex * s, y - 0.37 * s, hz - 0.08 * s), 0.06 * s, mat("cheek", (0.95, 0.55, 0.55), 0.5), scale=(1, 0.4, 0.8))

s = reset()
if scene_name == "kokeshi":
    floor_and_wall(wood("table", (0.55, 0.35, 0.18)), mat("wall", (0.85, 0.82, 0.76), 0.9))
    kokeshi(0, 0, (0.75, 0.1, 0.08))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.6, -6.2, 2.6), (0, 0, 1.3), 55)
elif scene_name == "kokeshi_trio":
    floor_and_wall(mat("cloth", (0.2, 0.3, 0.45), 0.95), mat("wall", (0.9, 0.9, 0.88), 0.9))
    kokeshi(-1.3, 0.3, (0.15, 0.3, 0.6), h=1.3, s=0.85)
    kokeshi(0, 0, (0.75, 0.1, 0.08), h=1.6)
    kokeshi(1.3, 0.3, (0.85, 0.55, 0.1), h=1.1, s=0.75)
    light((-3, -4, 5), 1000); light((4, -3, 3), 300)
    camera((0, -7.5, 2.8), (0, 0, 1.2), 50)
elif scene_name == "snowman":
    floor_and_wall(mat("shelf", (0.35, 0.2, 0.12), 0.5), mat("wall", (0.55, 0.65, 0.7), 0.9))
    white = mat("porcelain", (0.95, 0.95, 0.95), 0.15)
    sphere((0, 0, 0.7), 0.75, white); sphere((0, 0, 1.75), 0.55, white); sphere((0, 0, 2.55), 0.4, white)
    black = mat("coal", (0.02, 0.02, 0.02), 0.4)
    for ex in (-0.13, 0.13): sphere((ex, -0.36, 2.65), 0.05, black)
    bpy.ops.mesh.primitive_cone_add(vertices=32, radius1=0.06, depth=0.45, location=(0, -0.55, 2.55), rotation=(math.pi / 2, 0, 0))
    put(bpy.context.object, mat("carrot", (0.95, 0.4, 0.05), 0.4))
    cyl((0, 0, 2.95), 0.42, 0.06, black); cyl((0, 0, 3.15), 0.28, 0.4, black)
    for z in (1.6, 1.85, 2.05): sphere((0, -0.53, z), 0.05, black)
    bpy.ops.mesh.primitive_torus_add(major_radius=0.45, minor_radius=0.09, location=(0, 0, 2.22)); put(bpy.context.object, mat("scarf", (0.8, 0.1, 0.1), 0.8))
    light((-3, -4, 6), 1100); light((4, -2, 3), 300)
    camera((1.2, -7, 2.5), (0, 0, 1.7), 50)
s.render.filepath = out
bpy.ops.render.render(write_still=True)
