# Figurines modelled from primitives and rendered with Cycles (our own work, CC0).
import bpy, math, sys
argv = sys.argv[sys.argv.index("--") + 1:]
scene_name, out = argv[0], argv[1]

def reset():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    s = bpy.context.scene
    s.render.engine = "CYCLES"
    s.cycles.samples = int(__import__('os').environ.get('SAMPLES', '96'))
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
elif scene_name == "teddy":
    floor_and_wall(mat("bedspread", (0.75, 0.7, 0.6), 0.95), mat("wall", (0.6, 0.7, 0.8), 0.9))
    fur = mat("plush", (0.45, 0.27, 0.12), 0.95); pale = mat("muzzle", (0.8, 0.65, 0.45), 0.95)
    black = mat("button", (0.02, 0.02, 0.02), 0.2)
    sphere((0, 0, 0.9), 0.85, fur, scale=(1, 0.85, 1.1))
    sphere((0, -0.05, 2.2), 0.62, fur)
    for ex in (-0.48, 0.48): sphere((ex, 0.05, 2.75), 0.22, fur, scale=(1, 0.6, 1))
    sphere((0, -0.58, 2.05), 0.24, pale, scale=(1.1, 0.8, 0.8))
    sphere((0, -0.78, 2.12), 0.07, black)
    for ex in (-0.2, 0.2): sphere((ex, -0.6, 2.38), 0.065, black)
    for ex in (-0.85, 0.85): sphere((ex, -0.25, 1.2), 0.3, fur, scale=(0.8, 0.8, 1.4))
    for ex in (-0.5, 0.5): sphere((ex, -0.75, 0.3), 0.34, fur, scale=(1, 1.4, 0.8))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.8, -6.5, 2.4), (0, 0, 1.5), 50)
elif scene_name == "matryoshka":
    floor_and_wall(wood("sill", (0.6, 0.45, 0.3)), mat("wall", (0.93, 0.9, 0.82), 0.9))
    skin = mat("face", (0.95, 0.85, 0.72), 0.4); black = mat("paint", (0.02, 0.02, 0.02), 0.3)
    for k, (x, sc, col) in enumerate([(-2.1, 0.55, (0.1, 0.3, 0.7)), (-1.0, 0.75, (0.1, 0.55, 0.2)), (0.3, 1.0, (0.8, 0.1, 0.1)), (1.8, 0.85, (0.9, 0.6, 0.1))]):
        body = mat("lacquer%d" % k, col, 0.15)
        sphere((x, 0, 0.75 * sc), 0.7 * sc, body, scale=(1, 1, 1.1))
        sphere((x, 0, 1.55 * sc), 0.5 * sc, body)
        sphere((x, -0.36 * sc, 1.55 * sc), 0.3 * sc, skin, scale=(1, 0.45, 1))
        for ex in (-0.1, 0.1): sphere((x + ex * sc, -0.5 * sc, 1.6 * sc), 0.035 * sc, black)
        sphere((x, -0.5 * sc, 1.45 * sc), 0.03 * sc, mat("lips%d" % k, (0.8, 0.1, 0.1), 0.3), scale=(1.5, 0.6, 0.8))
        sphere((x, -0.55 * sc, 0.75 * sc), 0.28 * sc, mat("apron%d" % k, (0.95, 0.85, 0.3), 0.2), scale=(1, 0.4, 1.2))
    light((-3, -4, 5), 1000); light((4, -3, 3), 300)
    camera((0.2, -7.5, 2.3), (0, 0, 0.9), 48)
elif scene_name == "tin_robot":
    floor_and_wall(mat("desk", (0.25, 0.25, 0.28), 0.6), mat("wall", (0.85, 0.75, 0.6), 0.9))
    tin = mat("tin", (0.7, 0.72, 0.75), 0.25, metal=1.0); red = mat("red", (0.8, 0.1, 0.05), 0.3)
    def box(loc, size, m):
        bpy.ops.mesh.primitive_cube_add(size=1, location=loc); o = bpy.context.object; o.scale = size; o.data.materials.append(m); return o
    box((0, 0, 1.5), (1.2, 0.8, 1.3), tin); box((0, 0, 2.6), (0.8, 0.7, 0.7), tin)
    for ex in (-0.2, 0.2): sphere((ex, -0.36, 2.7), 0.1, mat("eye", (0.9, 0.8, 0.1), 0.2))
    box((0, -0.36, 2.45), (0.35, 0.05, 0.08), red); box((0, -0.41, 1.6), (0.6, 0.05, 0.5), red)
    for ex in (-0.35, 0.35): box((ex, 0, 0.45), (0.35, 0.5, 0.9), tin)
    for ex in (-0.8, 0.8): box((ex, 0, 1.55), (0.3, 0.3, 1.0), tin)
    cyl((0, 0, 3.1), 0.03, 0.4, tin); sphere((0, 0, 3.32), 0.07, red)
    light((-3, -4, 5), 900); light((4, -2, 3), 300)
    camera((1.5, -6.5, 2.6), (0, 0, 1.6), 50)
elif scene_name == "gnome":
    floor_and_wall(mat("lawn", (0.15, 0.4, 0.08), 0.95), mat("hedge", (0.1, 0.3, 0.08), 0.95))
    skin = mat("face", (0.95, 0.75, 0.6), 0.4)
    cyl((0, 0, 0.7), 0.55, 1.4, mat("coat", (0.15, 0.3, 0.7), 0.3), r2=0.4)
    sphere((0, 0, 1.75), 0.38, skin)
    bpy.ops.mesh.primitive_cone_add(vertices=48, radius1=0.42, depth=1.2, location=(0, 0.05, 2.55)); put(bpy.context.object, mat("hat", (0.85, 0.08, 0.05), 0.3))
    bpy.ops.mesh.primitive_cone_add(vertices=48, radius1=0.4, depth=0.9, location=(0, -0.2, 1.3), rotation=(math.pi, 0, 0)); put(bpy.context.object, mat("beard", (0.95, 0.95, 0.95), 0.6))
    sphere((0, -0.38, 1.75), 0.09, skin)
    for ex in (-0.13, 0.13): sphere((ex, -0.33, 1.88), 0.04, mat("eyes", (0.02, 0.02, 0.02), 0.2))
    light((-3, -4, 6), 1300); light((4, -2, 3), 300)
    camera((1.0, -6.0, 2.0), (0, 0, 1.4), 50)
elif scene_name == "nutcracker":
    floor_and_wall(wood("mantel", (0.4, 0.22, 0.12)), mat("wall", (0.3, 0.45, 0.35), 0.9))
    skin = mat("face", (0.95, 0.8, 0.7), 0.35); black = mat("black", (0.02, 0.02, 0.02), 0.2); red = mat("coat", (0.75, 0.05, 0.08), 0.25)
    for ex in (-0.22, 0.22): cyl((ex, 0, 0.45), 0.16, 0.9, black)
    cyl((0, 0, 1.45), 0.42, 1.1, red); cyl((0, 0, 1.05), 0.44, 0.12, mat("belt", (0.9, 0.75, 0.2), 0.2, metal=1.0))
    for ex in (-0.55, 0.55): cyl((ex, 0, 1.5), 0.12, 0.9, red)
    cyl((0, 0, 2.3), 0.33, 0.6, skin)
    cyl((0, 0, 2.95), 0.36, 0.7, black)
    for ex in (-0.12, 0.12): sphere((ex, -0.32, 2.42), 0.045, black)
    cyl((0, -0.2, 2.12), 0.25, 0.12, mat("beard", (0.97, 0.97, 0.95), 0.7))
    sphere((0, -0.34, 2.3), 0.06, skin)
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.5, -6.5, 2.0), (0, 0, 1.7), 55)
elif scene_name == "rag_doll":
    floor_and_wall(mat("chair", (0.5, 0.3, 0.5), 0.9), mat("wall", (0.95, 0.92, 0.85), 0.9))
    skin = mat("cloth_skin", (0.95, 0.8, 0.68), 0.9); dress = mat("dress", (0.2, 0.5, 0.8), 0.9)
    hair = mat("yarn", (0.85, 0.35, 0.05), 0.95); black = mat("button", (0.02, 0.02, 0.02), 0.3)
    bpy.ops.mesh.primitive_cone_add(vertices=48, radius1=0.8, radius2=0.3, depth=1.3, location=(0, 0, 0.65)); put(bpy.context.object, dress)
    sphere((0, 0, 1.7), 0.48, skin)
    sphere((0, 0.08, 1.85), 0.5, hair, scale=(1.05, 1, 0.85))
    for ex in (-0.55, 0.55): sphere((ex, 0.1, 1.6), 0.16, hair, scale=(0.8, 0.8, 2.0))
    for ex in (-0.16, 0.16): sphere((ex, -0.45, 1.75), 0.06, black)
    sphere((0, -0.47, 1.55), 0.05, mat("stitch", (0.8, 0.15, 0.2), 0.5), scale=(1.8, 0.5, 0.5))
    for ex in (-0.6, 0.6): cyl((ex, -0.1, 1.0), 0.1, 0.8, skin)
    for ex in (-0.25, 0.25): cyl((ex, -0.45, 0.1), 0.11, 0.9, mat("stockings", (0.95, 0.95, 0.95), 0.9))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.4, -5.5, 1.8), (0, 0, 1.2), 50)
elif scene_name == "mug":
    floor_and_wall(wood("table", (0.5, 0.32, 0.18)), mat("wall", (0.9, 0.88, 0.84), 0.9))
    glaze = mat("glaze", (0.1, 0.35, 0.55), 0.2)
    cyl((0, 0, 0.8), 0.7, 1.6, glaze)
    bpy.ops.mesh.primitive_torus_add(major_radius=0.45, minor_radius=0.1, location=(0.85, 0, 0.85), rotation=(math.pi / 2, 0, 0)); put(bpy.context.object, glaze)
    cyl((0, 0, 1.58), 0.62, 0.06, mat("coffee", (0.15, 0.07, 0.03), 0.1))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.5, -5.5, 2.6), (0, 0, 0.8), 55)
elif scene_name == "vase":
    floor_and_wall(mat("plinth", (0.9, 0.9, 0.9), 0.5), mat("backdrop", (0.3, 0.32, 0.35), 0.9))
    glaze = mat("celadon", (0.45, 0.65, 0.55), 0.1)
    sphere((0, 0, 1.0), 0.85, glaze, scale=(1, 1, 1.1)); cyl((0, 0, 2.1), 0.28, 0.9, glaze, r2=0.4)
    cyl((0, 0, 0.1), 0.5, 0.2, glaze)
    light((-3, -4, 5), 1000); light((4, -2, 3), 300)
    camera((0, -6.5, 2.0), (0, 0, 1.2), 55)
elif scene_name == "ballerina":
    floor_and_wall(mat("dresser", (0.9, 0.88, 0.85), 0.3), mat("wall", (0.75, 0.6, 0.65), 0.9))
    porcelain = mat("porcelain", (0.97, 0.95, 0.93), 0.12); pink = mat("tutu", (0.95, 0.6, 0.7), 0.3)
    cyl((0, 0, 0.1), 0.7, 0.2, mat("base", (0.85, 0.7, 0.3), 0.2, metal=1.0))
    cyl((0.05, 0, 0.75), 0.07, 1.1, porcelain); cyl((-0.25, 0.1, 1.1), 0.06, 0.9, porcelain)
    bpy.ops.mesh.primitive_cone_add(vertices=64, radius1=0.75, radius2=0.15, depth=0.35, location=(0, 0, 1.4)); put(bpy.context.object, pink)
    cyl((0, 0, 1.85), 0.17, 0.7, porcelain, r2=0.22)
    sphere((0, 0, 2.42), 0.2, porcelain); sphere((0, 0.08, 2.55), 0.12, mat("bun", (0.3, 0.18, 0.08), 0.4))
    for ex, rz in ((-0.45, 0.5), (0.45, -0.5)):
        bpy.ops.mesh.primitive_cylinder_add(vertices=24, radius=0.05, depth=0.8, location=(ex, 0, 2.35), rotation=(0, rz, 0)); put(bpy.context.object, porcelain)
    for ex in (-0.07, 0.07): sphere((ex, -0.19, 2.45), 0.02, mat("eyes", (0.1, 0.1, 0.2), 0.2))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.6, -6.0, 1.9), (0, 0, 1.4), 55)
elif scene_name == "clown":
    floor_and_wall(mat("shelf", (0.2, 0.25, 0.35), 0.5), mat("wall", (0.95, 0.9, 0.7), 0.9))
    skin = mat("face", (0.98, 0.96, 0.94), 0.3); red = mat("red", (0.85, 0.05, 0.05), 0.3)
    sphere((0, 0, 0.9), 0.8, mat("suit", (0.2, 0.6, 0.2), 0.5), scale=(1, 0.9, 1.1))
    for k, z in enumerate((0.5, 0.9, 1.3)): sphere((0, -0.75, z), 0.08, mat("pompom%d" % k, (0.9, 0.8, 0.1), 0.4))
    sphere((0, 0, 2.1), 0.5, skin)
    sphere((0, -0.5, 2.05), 0.12, red)
    for ex in (-0.45, 0.45): sphere((ex, 0.05, 2.2), 0.25, mat("hair", (0.95, 0.4, 0.05), 0.9))
    bpy.ops.mesh.primitive_cone_add(vertices=48, radius1=0.3, depth=0.7, location=(0, 0, 2.85)); put(bpy.context.object, mat("hat", (0.2, 0.3, 0.9), 0.3))
    for ex in (-0.17, 0.17): sphere((ex, -0.44, 2.25), 0.05, mat("eyes", (0.02, 0.02, 0.02), 0.2))
    sphere((0, -0.44, 1.85), 0.1, red, scale=(2.0, 0.4, 0.5))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.7, -6.0, 2.1), (0, 0, 1.5), 50)
elif scene_name == "teapot":
    floor_and_wall(mat("tablecloth", (0.9, 0.9, 0.92), 0.9), mat("wall", (0.55, 0.5, 0.45), 0.9))
    glaze = mat("glaze", (0.7, 0.15, 0.1), 0.15)
    sphere((0, 0, 0.85), 0.85, glaze, scale=(1.1, 1.1, 0.9)); cyl((0, 0, 1.62), 0.45, 0.1, glaze); sphere((0, 0, 1.72), 0.12, glaze)
    bpy.ops.mesh.primitive_cone_add(vertices=32, radius1=0.16, radius2=0.07, depth=0.9, location=(-1.05, 0, 1.05), rotation=(0, -0.8, 0)); put(bpy.context.object, glaze)
    bpy.ops.mesh.primitive_torus_add(major_radius=0.38, minor_radius=0.07, location=(0.95, 0, 0.95), rotation=(math.pi / 2, 0, 0)); put(bpy.context.object, glaze)
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.3, -5.8, 2.4), (0, 0, 0.9), 55)
elif scene_name == "perfume":
    floor_and_wall(mat("marble", (0.92, 0.92, 0.9), 0.2), mat("backdrop", (0.85, 0.8, 0.9), 0.9))
    glass = mat("glass", (0.85, 0.65, 0.3), 0.05)
    bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 0.8)); o = bpy.context.object; o.scale = (1.1, 0.5, 1.6); o.data.materials.append(glass)
    cyl((0, 0, 1.75), 0.15, 0.3, mat("neck", (0.8, 0.7, 0.3), 0.2, metal=1.0))
    bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0, 2.1)); o = bpy.context.object; o.scale = (0.5, 0.5, 0.45); o.data.materials.append(mat("cap", (0.05, 0.05, 0.05), 0.2))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.6, -5.5, 1.8), (0, 0, 1.1), 55)
elif scene_name == "rubber_duck":
    floor_and_wall(mat("bath_tile", (0.85, 0.92, 0.95), 0.2), mat("tiles", (0.55, 0.78, 0.85), 0.3))
    yellow = mat("rubber", (0.98, 0.78, 0.05), 0.35)
    sphere((0, 0, 0.75), 0.9, yellow, scale=(1.25, 1, 0.8))
    sphere((-0.55, 0, 1.65), 0.55, yellow)
    sphere((-1.1, 0, 1.55), 0.22, mat("beak", (0.95, 0.4, 0.05), 0.35), scale=(1.3, 0.9, 0.45))
    for ey in (-0.28, 0.28): sphere((-0.95, ey, 1.85), 0.07, mat("eye", (0.02, 0.02, 0.02), 0.2))
    sphere((0.95, 0, 1.1), 0.3, yellow, scale=(1, 0.8, 1.2))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((-2.6, -5.2, 2.3), (-0.2, 0, 1.0), 55)
elif scene_name == "daruma":
    floor_and_wall(wood("shelf", (0.45, 0.3, 0.18)), mat("shoji", (0.95, 0.93, 0.86), 0.9))
    red = mat("lacquer", (0.78, 0.05, 0.04), 0.2); white = mat("face", (0.97, 0.95, 0.9), 0.3)
    black = mat("ink", (0.02, 0.02, 0.02), 0.3); gold = mat("gold", (0.9, 0.7, 0.2), 0.2, metal=1.0)
    sphere((0, 0, 1.1), 1.1, red, scale=(1, 0.95, 1.05))
    sphere((0, -0.8, 1.35), 0.55, white, scale=(1, 0.45, 0.85))
    for ex in (-0.22, 0.22): sphere((ex, -1.04, 1.45), 0.13, black, scale=(1, 0.4, 1))
    for ex in (-0.3, 0.3): sphere((ex, -0.97, 1.7), 0.14, black, scale=(1.4, 0.3, 0.35))
    sphere((0, -1.03, 0.7), 0.3, gold, scale=(1.4, 0.3, 0.6))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.8, -6.0, 2.0), (0, 0, 1.1), 55)
elif scene_name == "bunny":
    floor_and_wall(mat("quilt", (0.9, 0.75, 0.8), 0.95), mat("wall", (0.8, 0.85, 0.7), 0.9))
    fur = mat("plush", (0.92, 0.9, 0.86), 0.95); pink = mat("pink", (0.95, 0.6, 0.65), 0.9)
    black = mat("eye", (0.02, 0.02, 0.02), 0.2)
    sphere((0, 0, 0.85), 0.8, fur, scale=(1, 0.9, 1.05))
    sphere((0, -0.05, 1.95), 0.55, fur)
    for ex, rz in ((-0.22, 0.15), (0.22, -0.15)):
        sphere((ex, 0.0, 2.85), 0.16, fur, scale=(1, 0.6, 3.2)); sphere((ex, -0.07, 2.85), 0.09, pink, scale=(1, 0.4, 2.8))
    for ex in (-0.2, 0.2): sphere((ex, -0.5, 2.05), 0.06, black)
    sphere((0, -0.55, 1.88), 0.06, pink)
    for ex in (-0.45, 0.45): sphere((ex, -0.7, 0.25), 0.28, fur, scale=(0.9, 1.4, 0.7))
    for ex in (-0.78, 0.78): sphere((ex, -0.2, 1.05), 0.22, fur, scale=(0.8, 0.8, 1.5))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.7, -6.2, 2.2), (0, 0, 1.5), 50)
elif scene_name == "toy_horse":
    floor_and_wall(wood("floor", (0.65, 0.45, 0.25)), mat("wall", (0.75, 0.82, 0.9), 0.9))
    body = mat("paint_white", (0.95, 0.93, 0.88), 0.35); red = mat("saddle", (0.8, 0.1, 0.1), 0.3)
    dark = mat("mane", (0.12, 0.07, 0.04), 0.6); black = mat("eye", (0.02, 0.02, 0.02), 0.2)
    def box(loc, size, m):
        bpy.ops.mesh.primitive_cube_add(size=1, location=loc); o = bpy.context.object; o.scale = size; o.data.materials.append(m); return o
    box((0, 0, 0.25), (2.4, 1.0, 0.12), wood("platform", (0.4, 0.25, 0.12)))
    for wx in (-0.95, 0.95):
        for wy in (-0.55, 0.55):
            bpy.ops.mesh.primitive_cylinder_add(vertices=48, radius=0.22, depth=0.1, location=(wx, wy, 0.22), rotation=(math.pi / 2, 0, 0)); put(bpy.context.object, red)
    for lx in (-0.7, 0.7):
        for ly in (-0.25, 0.25): cyl((lx, ly, 0.75), 0.1, 0.9, body)
    sphere((0, 0, 1.35), 0.6, body, scale=(1.5, 0.6, 0.6))
    box((0, 0, 1.72), (0.6, 0.74, 0.12), red)
    bpy.ops.mesh.primitive_cylinder_add(vertices=32, radius=0.2, depth=0.8, location=(-0.95, 0, 1.85), rotation=(0, -0.6, 0)); put(bpy.context.object, body)
    sphere((-1.25, 0, 2.2), 0.3, body, scale=(1.4, 0.8, 0.8))
    box((-1.0, 0, 2.05), (0.2, 0.12, 0.7), dark)
    for ey in (-0.22, 0.22): sphere((-1.3, ey, 2.32), 0.05, black)
    cyl((1.05, 0, 1.2), 0.08, 0.7, dark)
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.6, -6.0, 2.0), (0, 0, 1.2), 48)
elif scene_name == "owl":
    floor_and_wall(mat("sideboard", (0.25, 0.18, 0.15), 0.4), mat("wall", (0.85, 0.8, 0.7), 0.9))
    glaze = mat("glaze", (0.35, 0.55, 0.6), 0.12); cream = mat("cream", (0.95, 0.9, 0.8), 0.15)
    amber = mat("amber", (0.95, 0.6, 0.1), 0.1); black = mat("pupil", (0.02, 0.02, 0.02), 0.1)
    sphere((0, 0, 1.0), 0.85, glaze, scale=(1, 0.9, 1.15))
    sphere((0, -0.45, 1.05), 0.5, cream, scale=(1, 0.5, 1.0))
    sphere((0, 0, 2.0), 0.62, glaze, scale=(1.1, 0.95, 0.9))
    for ex in (-0.25, 0.25):
        sphere((ex, -0.5, 2.05), 0.22, cream, scale=(1, 0.4, 1)); sphere((ex, -0.58, 2.05), 0.12, amber, scale=(1, 0.4, 1)); sphere((ex, -0.63, 2.05), 0.06, black)
    bpy.ops.mesh.primitive_cone_add(vertices=24, radius1=0.08, depth=0.25, location=(0, -0.62, 1.85), rotation=(math.pi, 0, 0)); put(bpy.context.object, amber)
    for ex in (-0.45, 0.45):
        bpy.ops.mesh.primitive_cone_add(vertices=24, radius1=0.14, depth=0.4, location=(ex, 0, 2.55)); put(bpy.context.object, glaze)
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.6, -6.0, 2.0), (0, 0, 1.3), 55)
elif scene_name == "tin_soldier":
    floor_and_wall(wood("desk", (0.5, 0.3, 0.15)), mat("wall", (0.8, 0.75, 0.65), 0.9))
    red = mat("coat", (0.7, 0.05, 0.05), 0.3, metal=0.3); navy = mat("trousers", (0.05, 0.08, 0.25), 0.3, metal=0.3)
    black = mat("shako", (0.03, 0.03, 0.03), 0.25, metal=0.4); gold = mat("brass", (0.85, 0.65, 0.2), 0.25, metal=1.0)
    skin = mat("face", (0.92, 0.75, 0.62), 0.35)
    cyl((0, 0, 0.05), 0.6, 0.1, mat("base", (0.15, 0.35, 0.12), 0.4))
    for ex in (-0.16, 0.16): cyl((ex, 0, 0.65), 0.14, 1.1, navy)
    cyl((0, 0, 1.7), 0.38, 1.0, red, r2=0.34)
    cyl((0, 0, 1.25), 0.39, 0.1, mat("belt", (0.95, 0.95, 0.9), 0.4))
    for z in (1.45, 1.7, 1.95): sphere((0, -0.36, z), 0.045, gold)
    for ex in (-0.48, 0.48): cyl((ex, 0, 1.65), 0.1, 0.85, red)
    sphere((0, 0, 2.45), 0.3, skin)
    for ex in (-0.1, 0.1): sphere((ex, -0.27, 2.5), 0.035, black)
    sphere((0, -0.29, 2.36), 0.05, mat("cheeks", (0.85, 0.35, 0.35), 0.4), scale=(2, 0.5, 0.6))
    cyl((0, 0, 2.95), 0.28, 0.7, black, r2=0.33); sphere((0, -0.3, 3.2), 0.08, gold)
    cyl((0.58, -0.05, 1.9), 0.04, 1.9, mat("rifle", (0.35, 0.2, 0.1), 0.5))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((1.0, -6.5, 2.3), (0, 0, 1.6), 50)
elif scene_name == "lucky_cat":
    floor_and_wall(mat("counter", (0.6, 0.1, 0.1), 0.3), mat("wall", (0.92, 0.88, 0.75), 0.9))
    white = mat("ceramic", (0.97, 0.97, 0.95), 0.12); red = mat("red", (0.85, 0.05, 0.05), 0.2); gold = mat("gold", (0.9, 0.7, 0.2), 0.2, metal=1.0)
    black = mat("paint", (0.02, 0.02, 0.02), 0.3)
    sphere((0, 0, 0.9), 0.9, white, scale=(1, 0.85, 1.0))
    sphere((0, -0.05, 2.1), 0.72, white, scale=(1.1, 0.9, 0.95))
    for ex in (-0.45, 0.45):
        bpy.ops.mesh.primitive_cone_add(vertices=32, radius1=0.25, depth=0.45, location=(ex, 0, 2.75), rotation=(0, ex * 0.5, 0)); put(bpy.context.object, white)
    for ex in (-0.25, 0.25): sphere((ex, -0.62, 2.2), 0.08, black, scale=(1.3, 0.5, 0.6))
    sphere((0, -0.68, 2.0), 0.06, mat("nose", (0.9, 0.4, 0.5), 0.3))
    bpy.ops.mesh.primitive_torus_add(major_radius=0.55, minor_radius=0.07, location=(0, -0.05, 1.55)); put(bpy.context.object, red)
    sphere((0, -0.62, 1.45), 0.13, gold)
    sphere((0.75, -0.3, 2.55), 0.24, white, scale=(0.9, 0.8, 1.3)); cyl((0.75, -0.2, 2.0), 0.2, 0.8, white)
    sphere((-0.45, -0.7, 1.0), 0.35, gold, scale=(1.2, 0.3, 1.5))
    light((-3, -4, 5), 900); light((4, -2, 3), 300)
    camera((0.7, -6.8, 2.2), (0, 0, 1.55), 50)
elif scene_name == "penguin":
    floor_and_wall(mat("sofa", (0.35, 0.45, 0.3), 0.95), mat("wall", (0.8, 0.8, 0.82), 0.9))
    black = mat("plush", (0.06, 0.06, 0.08), 0.95); white = mat("belly", (0.95, 0.95, 0.93), 0.95); orange = mat("beak", (0.95, 0.55, 0.05), 0.8)
    sphere((0, 0, 1.1), 1.0, black, scale=(1, 0.9, 1.15))
    sphere((0, -0.2, 1.0), 0.85, white, scale=(0.85, 0.85, 1.0))
    sphere((0, 0, 2.3), 0.65, black)
    sphere((0, -0.2, 2.2), 0.5, white, scale=(0.9, 0.9, 0.8))
    for ex in (-0.22, 0.22): sphere((ex, -0.6, 2.35), 0.07, mat("eye", (0.02, 0.02, 0.02), 0.1))
    bpy.ops.mesh.primitive_cone_add(vertices=32, radius1=0.13, depth=0.35, location=(0, -0.78, 2.15), rotation=(math.pi / 2, 0, 0)); put(bpy.context.object, orange)
    for ex in (-1.0, 1.0): sphere((ex, -0.05, 1.2), 0.25, black, scale=(0.4, 0.8, 1.6))
    for ex in (-0.4, 0.4): sphere((ex, -0.8, 0.12), 0.22, orange, scale=(1, 1.6, 0.5))
    sphere((-2.2, 0.8, 0.7), 0.75, mat("cushion", (0.8, 0.6, 0.3), 0.95), scale=(1, 0.4, 1))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.9, -7, 2.3), (0, 0, 1.4), 50)
elif scene_name == "elephant":
    floor_and_wall(mat("rug", (0.75, 0.68, 0.55), 0.95), mat("wall", (0.5, 0.62, 0.55), 0.9))
    w = wood("elephant", (0.75, 0.5, 0.28)); black = mat("eye", (0.02, 0.02, 0.02), 0.2)
    sphere((0, 0, 1.35), 0.95, w, scale=(1.5, 0.9, 0.9))
    for ex in (-0.9, 0.9):
        for ey in (-0.35, 0.35): cyl((ex, ey, 0.45), 0.24, 0.9, w)
    sphere((-1.55, 0, 1.75), 0.62, w)
    for ey in (-0.55, 0.55): sphere((-1.3, ey, 1.8), 0.45, wood("ear", (0.65, 0.4, 0.22)), scale=(0.25, 1, 1.2))
    cyl((-2.05, 0, 1.1), 0.14, 1.1, w, r2=0.09)
    for ey in (-0.3, 0.3): sphere((-1.95, ey, 1.95), 0.06, black)
    cyl((1.55, 0, 1.2), 0.05, 0.6, w)
    for ex in (-0.9, 0.9):
        bpy.ops.mesh.primitive_torus_add(major_radius=0.3, minor_radius=0.06, location=(ex, -0.75, 0.3), rotation=(math.pi / 2, 0, 0)); put(bpy.context.object, mat("wheel", (0.8, 0.15, 0.1), 0.4))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((-1.5, -6.8, 2.4), (-0.3, 0, 1.2), 45)
elif scene_name == "angel":
    floor_and_wall(mat("mantel", (0.92, 0.9, 0.86), 0.3), mat("wall", (0.35, 0.3, 0.45), 0.9))
    porc = mat("porcelain", (0.97, 0.96, 0.93), 0.1); gold = mat("gilt", (0.9, 0.72, 0.25), 0.2, metal=1.0)
    skin = mat("bisque", (0.96, 0.86, 0.78), 0.25); hair = mat("hair", (0.9, 0.75, 0.35), 0.4)
    cyl((0, 0, 0.1), 0.6, 0.2, gold)
    cyl((0, 0, 1.1), 0.65, 1.8, porc, r2=0.25)
    sphere((0, 0, 2.3), 0.33, skin)
    sphere((0, 0.05, 2.42), 0.35, hair, scale=(1, 1, 0.85))
    bpy.ops.mesh.primitive_torus_add(major_radius=0.28, minor_radius=0.03, location=(0, 0, 2.9)); put(bpy.context.object, gold)
    for ex in (-0.5, 0.5): sphere((ex, 0.35, 1.8), 0.55, porc, scale=(0.5, 0.15, 1.1))
    for ex in (-0.12, 0.12): sphere((ex, -0.3, 2.32), 0.03, mat("eye", (0.1, 0.15, 0.4), 0.2))
    sphere((0, -0.35, 1.65), 0.17, gold, scale=(1.2, 0.6, 1))
    for ex in (-0.25, 0.25): cyl((ex, -0.2, 1.75), 0.08, 0.5, porc)
    cyl((1.6, 0.5, 0.8), 0.12, 1.6, mat("candle", (0.95, 0.92, 0.8), 0.5))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((0.6, -6.3, 2.2), (0.2, 0, 1.5), 50)
elif scene_name == "peg_family":
    floor_and_wall(wood("shelf", (0.7, 0.55, 0.38)), mat("wall", (0.78, 0.86, 0.8), 0.9))
    skin = mat("face", (0.95, 0.82, 0.66), 0.45); black = mat("paint", (0.03, 0.03, 0.03), 0.3)
    for k, (x, h, col, hair) in enumerate([(-1.8, 2.0, (0.15, 0.3, 0.65), (0.25, 0.15, 0.05)), (-0.6, 1.8, (0.8, 0.15, 0.2), (0.9, 0.7, 0.2)), (0.5, 1.2, (0.2, 0.6, 0.3), (0.25, 0.15, 0.05)), (1.4, 1.0, (0.95, 0.6, 0.1), (0.9, 0.7, 0.2))]):
        r = 0.32 * (h / 2.0) ** 0.5 + 0.12
        cyl((x, 0, h * 0.35), r, h * 0.7, mat("body%d" % k, col, 0.35))
        sphere((x, 0, h * 0.7 + r * 0.9), r * 1.05, skin)
        sphere((x, 0.05, h * 0.7 + r * 1.15), r * 1.08, mat("hair%d" % k, hair, 0.5), scale=(1, 1, 0.75))
        for ex in (-0.35, 0.35): sphere((x + ex * r, -r * 0.98, h * 0.7 + r * 0.95), r * 0.09, black)
        sphere((x, -r * 1.0, h * 0.7 + r * 0.65), r * 0.08, mat("mouth%d" % k, (0.8, 0.15, 0.15), 0.3), scale=(1.6, 0.5, 0.6))
    light((-3, -4, 5), 1000); light((4, -3, 3), 300)
    camera((0.3, -7.5, 2.2), (-0.2, 0, 1.2), 48)
elif scene_name == "plush_frog":
    floor_and_wall(mat("pillow", (0.9, 0.88, 0.95), 0.95), mat("wall", (0.95, 0.85, 0.7), 0.9))
    fur = mat("plush", (0.3, 0.65, 0.15), 0.95); belly = mat("belly", (0.85, 0.9, 0.55), 0.95)
    white = mat("eyewhite", (0.97, 0.97, 0.97), 0.3); black = mat("pupil", (0.02, 0.02, 0.02), 0.2)
    sphere((0, 0, 0.85), 0.95, fur, scale=(1.15, 0.9, 0.85))
    sphere((0, -0.45, 0.7), 0.62, belly, scale=(1, 0.6, 0.9))
    for ex in (-0.45, 0.45):
        sphere((ex, -0.15, 1.6), 0.32, fur); sphere((ex, -0.38, 1.68), 0.2, white); sphere((ex, -0.55, 1.7), 0.09, black)
        sphere((ex * 2.0, -0.4, 0.35), 0.3, fur, scale=(1.4, 1.8, 0.5))
    sphere((0, -0.72, 1.1), 0.35, mat("mouth", (0.7, 0.1, 0.15), 0.8), scale=(1.2, 0.15, 0.12))
    light((-3, -4, 5), 900); light((4, -2, 3), 300)
    camera((0.6, -6.0, 2.0), (0, 0, 1.0), 50)
elif scene_name == "toy_dinosaur":
    floor_and_wall(mat("carpet", (0.25, 0.35, 0.55), 0.95), mat("wall", (0.92, 0.9, 0.8), 0.9))
    skin = mat("vinyl", (0.35, 0.55, 0.15), 0.35); spot = mat("spots", (0.85, 0.6, 0.1), 0.35)
    sphere((0, 0, 1.2), 0.9, skin, scale=(1.7, 0.8, 0.8))
    for i in range(6): sphere((1.3 + i * 0.38, 0, 1.5 + i * 0.28), 0.32 - i * 0.02, skin)
    sphere((3.6, -0.05, 3.3), 0.42, skin, scale=(1.4, 0.8, 0.8))
    for i in range(6): sphere((-1.5 - i * 0.4, 0, 1.0 - i * 0.12), 0.36 - i * 0.05, skin)
    for ex, ey in ((-0.8, -0.4), (0.8, -0.4), (-0.8, 0.4), (0.8, 0.4)): cyl((ex, ey, 0.35), 0.25, 0.7, skin)
    for i in range(5): bpy.ops.mesh.primitive_cone_add(vertices=16, radius1=0.2, depth=0.4, location=(-1.2 + i * 0.55, 0, 2.0)); put(bpy.context.object, spot)
    for ey in (-0.3, 0.3): sphere((3.85, ey, 3.45), 0.06, mat("eye", (0.02, 0.02, 0.02), 0.2))
    light((-3, -5, 6), 1200); light((5, -2, 3), 300)
    camera((0.8, -10.5, 3.0), (0.5, 0, 1.7), 50)
elif scene_name == "toy_astronaut":
    floor_and_wall(mat("desk", (0.85, 0.85, 0.87), 0.4), mat("wall", (0.15, 0.18, 0.3), 0.9))
    suit = mat("suit", (0.93, 0.93, 0.92), 0.5); visor = mat("visor", (0.9, 0.6, 0.1), 0.05, metal=1.0)
    grey = mat("pack", (0.55, 0.56, 0.6), 0.4)
    sphere((0, 0, 1.5), 0.6, suit, scale=(1, 0.8, 1.1))
    sphere((0, 0, 2.45), 0.5, suit); sphere((0, -0.22, 2.47), 0.36, visor, scale=(1, 0.8, 0.8))
    for ex in (-0.25, 0.25): cyl((ex, 0, 0.5), 0.2, 1.0, suit)
    for ex in (-0.75, 0.75): cyl((ex, 0, 1.55), 0.16, 0.9, suit)
    bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0.55, 1.6)); o = bpy.context.object; o.scale = (0.8, 0.35, 1.0); o.data.materials.append(grey)
    cyl((0, -0.52, 1.55), 0.18, 0.05, mat("flag", (0.1, 0.3, 0.75), 0.3)).rotation_euler = (math.pi / 2, 0, 0)
    light((-3, -4, 5), 1000); light((4, -2, 3), 300)
    camera((0.8, -6.0, 2.2), (0, 0, 1.5), 50)
elif scene_name == "porcelain_dog":
    floor_and_wall(wood("sideboard", (0.35, 0.2, 0.1)), mat("wall", (0.7, 0.6, 0.75), 0.9))
    porc = mat("porcelain", (0.96, 0.95, 0.92), 0.1); patch = mat("patch", (0.35, 0.2, 0.08), 0.1)
    sphere((0, 0, 1.0), 0.7, porc, scale=(0.8, 1.0, 1.1))
    sphere((0, -0.35, 2.0), 0.45, porc)
    sphere((0, -0.8, 1.9), 0.22, porc, scale=(1, 1.2, 0.8)); sphere((0, -1.02, 1.95), 0.07, mat("nose", (0.05, 0.05, 0.05), 0.1))
    for ex in (-0.42, 0.42): sphere((ex, -0.3, 1.9), 0.17, patch, scale=(0.5, 0.8, 1.8))
    for ex in (-0.18, 0.18): sphere((ex, -0.72, 2.15), 0.05, mat("eyes", (0.05, 0.05, 0.05), 0.1))
    for ex in (-0.3, 0.3): cyl((ex, -0.45, 0.35), 0.14, 0.7, porc)
    sphere((0.45, 0.3, 1.0), 0.28, patch, scale=(0.3, 1, 1))
    sphere((0, 0.4, 0.35), 0.45, porc, scale=(1.1, 1.0, 0.5))
    light((-3, -4, 5), 900); light((4, -2, 3), 250)
    camera((1.3, -6.0, 2.0), (0, 0, 1.2), 55)
elif scene_name == "troll_doll":
    floor_and_wall(mat("dresser", (0.95, 0.95, 0.95), 0.3), mat("wall", (0.95, 0.8, 0.85), 0.9))
    skin = mat("vinyl", (0.9, 0.7, 0.55), 0.5); hair = mat("hair", (0.9, 0.1, 0.5), 0.95)
    cyl((0, 0, 0.75), 0.55, 1.0, mat("shirt", (0.2, 0.7, 0.8), 0.8), r2=0.45)
    sphere((0, 0, 1.6), 0.55, skin, scale=(1, 0.9, 1))
    bpy.ops.mesh.primitive_cone_add(vertices=48, radius1=0.45, radius2=0.05, depth=1.6, location=(0, 0, 2.8)); put(bpy.context.object, hair)
    sphere((0, -0.52, 1.55), 0.12, skin)
    for ex in (-0.18, 0.18): sphere((ex, -0.47, 1.72), 0.07, mat("eyes", (0.05, 0.2, 0.6), 0.1))
    for ex in (-0.55, 0.55): sphere((ex, 0, 1.6), 0.13, skin, scale=(0.5, 1, 1.4))
    for ex in (-0.25, 0.25): sphere((ex, -0.3, 0.12), 0.2, skin, scale=(1, 1.5, 0.5))
    light((-3, -4, 5), 900); light((4, -2, 3), 300)
    camera((0.4, -6.0, 2.0), (0, 0, 1.5), 55)
elif scene_name == "baby_doll":
    floor_and_wall(mat("blanket", (0.95, 0.8, 0.85), 0.95), mat("wall", (0.85, 0.9, 0.95), 0.9))
    skin = mat("vinyl", (0.98, 0.82, 0.72), 0.45); dress = mat("romper", (0.95, 0.95, 0.6), 0.9)
    sphere((0, 0, 0.8), 0.7, dress, scale=(1, 0.8, 1.1))
    sphere((0, 0, 1.85), 0.58, skin)
    sphere((0, 0.08, 2.05), 0.55, mat("hair", (0.75, 0.5, 0.2), 0.8), scale=(1.02, 1, 0.7))
    for ex in (-0.2, 0.2): sphere((ex, -0.5, 1.9), 0.08, mat("eyes", (0.2, 0.35, 0.7), 0.1), scale=(1, 0.5, 1))
    sphere((0, -0.56, 1.65), 0.06, mat("lips", (0.9, 0.35, 0.4), 0.3), scale=(1.5, 0.5, 0.7))
    for ex in (-0.3, 0.3): sphere((ex, -0.45, 1.72), 0.08, mat("cheeks", (1.0, 0.6, 0.6), 0.6), scale=(1, 0.4, 0.7))
    for ex in (-0.72, 0.72): cyl((ex, -0.1, 1.0), 0.14, 0.7, skin)
    for ex in (-0.3, 0.3): sphere((ex, -0.6, 0.2), 0.2, skin, scale=(1, 2.2, 0.8))
    light((-3, -4, 5), 900); light((4, -2, 3), 300)
    camera((0.5, -6.0, 2.2), (0, 0, 1.3), 50)
elif scene_name == "wooden_robot":
    floor_and_wall(wood("floor", (0.65, 0.45, 0.3)), mat("wall", (0.95, 0.95, 0.92), 0.9))
    w1 = wood("beech", (0.85, 0.65, 0.42)); blue = mat("paint", (0.1, 0.4, 0.8), 0.4); yellow = mat("paint2", (0.95, 0.75, 0.1), 0.4)
    def box2(loc, size, m):
        bpy.ops.mesh.primitive_cube_add(size=1, location=loc); o = bpy.context.object; o.scale = size; o.data.materials.append(m); return o
    box2((0, 0, 1.4), (1.0, 0.7, 1.1), blue); box2((0, 0, 2.35), (0.7, 0.6, 0.6), w1)
    for ex in (-0.28, 0.28): box2((ex, 0, 0.45), (0.3, 0.4, 0.9), w1)
    for ex in (-0.68, 0.68): box2((ex, 0, 1.4), (0.25, 0.3, 0.9), yellow)
    for ex in (-0.15, 0.15): cyl((ex, -0.31, 2.42), 0.07, 0.04, mat("eye", (0.05, 0.05, 0.05), 0.3)).rotation_euler = (math.pi / 2, 0, 0)
    box2((0, -0.31, 2.2), (0.3, 0.03, 0.06), mat("mouth", (0.8, 0.1, 0.1), 0.4))
    for ez in (1.2, 1.5): cyl((0, -0.36, ez), 0.08, 0.04, yellow).rotation_euler = (math.pi / 2, 0, 0)
    light((-3, -4, 5), 1000); light((4, -2, 3), 300)
    camera((1.6, -6.0, 2.3), (0, 0, 1.4), 55)
elif scene_name in ("living_room", "bedroom", "kitchen", "bathroom", "study", "dining_room", "kids_room", "entrance_hall"):
    # a room, not a figurine: three walls, a window of daylight, furniture from boxes; wide lens
    s.render.resolution_x, s.render.resolution_y = 640, 427
    s.world.node_tree.nodes["Background"].inputs[1].default_value = 0.08
    def box(loc, size, m):
        bpy.ops.mesh.primitive_cube_add(size=1, location=loc); o = bpy.context.object; o.scale = size; o.data.materials.append(m); return o
    def window(x, z, w, h):
        bpy.ops.mesh.primitive_plane_add(size=1, location=(x, 3.98, z), rotation=(math.pi / 2, 0, 0)); o = bpy.context.object; o.scale = (w, h, 1)
        e = bpy.data.materials.new("sky"); e.use_nodes = True; nt = e.node_tree; nt.nodes.remove(nt.nodes["Principled BSDF"])
        em = nt.nodes.new("ShaderNodeEmission"); em.inputs[0].default_value = (0.85, 0.92, 1.0, 1); em.inputs[1].default_value = 3
        nt.links.new(em.outputs[0], nt.nodes["Material Output"].inputs[0]); o.data.materials.append(e)
        bpy.ops.object.light_add(type="AREA", location=(x, 3.7, z)); l = bpy.context.object; l.data.energy = 250; l.data.size = max(w, h); l.rotation_euler = (-math.pi / 2, 0, 0)
        frame = mat("frame", (0.95, 0.95, 0.95), 0.4)
        box((x, 3.95, z + h / 2), (w + 0.1, 0.08, 0.06), frame); box((x, 3.95, z - h / 2), (w + 0.1, 0.12, 0.06), frame); box((x, 3.95, z), (0.05, 0.08, h), frame)
    wallm = {"living_room": (0.86, 0.8, 0.7), "bedroom": (0.7, 0.78, 0.82), "kitchen": (0.93, 0.92, 0.88), "bathroom": (0.78, 0.88, 0.9), "study": (0.55, 0.6, 0.5), "dining_room": (0.9, 0.82, 0.68), "kids_room": (0.95, 0.85, 0.55), "entrance_hall": (0.82, 0.8, 0.78)}[scene_name]
    floor_m = wood("floor", (0.6, 0.42, 0.25)) if scene_name not in ("kitchen", "bathroom") else mat("tiles", (0.75, 0.72, 0.68), 0.3)
    bpy.ops.mesh.primitive_plane_add(size=12, location=(0, 0, 0)); put(bpy.context.object, floor_m)
    wm = mat("wall", wallm, 0.9)
    box((0, 4.05, 1.5), (10, 0.1, 3.0), wm); box((-4.05, 0, 1.5), (0.1, 10, 3.0), wm); box((4.05, 0, 1.5), (0.1, 10, 3.0), wm)
    box((0, 0, 3.05), (10, 10, 0.1), mat("ceiling", (0.95, 0.95, 0.95), 0.9))
    if scene_name == "living_room":
        window(1.5, 1.7, 2.2, 1.6)
        sofa = mat("sofa", (0.25, 0.35, 0.5), 0.9)
        box((-1.2, 2.9, 0.25), (3.0, 1.0, 0.5), sofa); box((-1.2, 3.3, 0.75), (3.0, 0.3, 0.6), sofa)
        for sx in (-2.55, 0.15): box((sx, 2.9, 0.45), (0.3, 1.0, 0.5), sofa)
        for k, cx in enumerate((-2.0, -0.4)): box((cx, 3.05, 0.7), (0.6, 0.2, 0.45), mat("cushion%d" % k, (0.9, 0.7, 0.2), 0.9))
        box((-1.0, 1.3, 0.001), (3.2, 2.0, 0.01), mat("rug", (0.7, 0.25, 0.2), 0.95))
        box((-1.0, 1.4, 0.35), (1.4, 0.7, 0.06), wood("table", (0.45, 0.28, 0.15)))
        for tx in (-1.6, -0.4):
            for ty in (1.15, 1.65): box((tx, ty, 0.16), (0.06, 0.06, 0.32), wood("leg", (0.45, 0.28, 0.15)))
        cyl((3.2, 3.2, 0.7), 0.05, 1.4, mat("pole", (0.1, 0.1, 0.1), 0.3, metal=1.0)); cyl((3.2, 3.2, 1.55), 0.3, 0.4, mat("shade", (0.95, 0.9, 0.8), 0.8), r2=0.18)
        box((-1.2, 3.97, 1.9), (1.4, 0.04, 0.9), mat("picture", (0.3, 0.5, 0.35), 0.5))
        cyl((3.3, 1.5, 0.3), 0.25, 0.6, mat("pot", (0.8, 0.45, 0.3), 0.5)); sphere((3.3, 1.5, 0.95), 0.45, mat("leaves", (0.15, 0.4, 0.12), 0.8))
        camera((1.4, -1.2, 1.5), (-0.8, 2.6, 0.8), 20)
    elif scene_name == "bedroom":
        window(-1.8, 1.7, 1.6, 1.6)
        box((1.0, 2.6, 0.25), (2.0, 2.6, 0.5), wood("bedframe", (0.5, 0.32, 0.2)))
        box((1.0, 2.5, 0.6), (1.9, 2.4, 0.25), mat("duvet", (0.92, 0.92, 0.95), 0.95))
        box((1.0, 3.85, 0.9), (2.1, 0.12, 1.2), wood("headboard", (0.5, 0.32, 0.2)))
        for px in (0.55, 1.45): box((px, 3.5, 0.85), (0.75, 0.4, 0.2), mat("pillow", (0.98, 0.98, 0.98), 0.95))
        box((1.0, 1.7, 0.74), (1.95, 0.7, 0.05), mat("throw", (0.6, 0.3, 0.35), 0.95))
        box((-0.4, 3.6, 0.3), (0.5, 0.5, 0.6), wood("nightstand", (0.6, 0.45, 0.3)))
        cyl((-0.4, 3.6, 0.75), 0.08, 0.3, mat("lampbase", (0.2, 0.2, 0.2), 0.3)); cyl((-0.4, 3.6, 1.0), 0.2, 0.25, mat("lampshade", (0.95, 0.88, 0.7), 0.8), r2=0.13)
        box((-3.5, 1.0, 1.0), (0.8, 1.6, 2.0), wood("wardrobe", (0.7, 0.55, 0.4)))
        box((1.0, 0.6, 0.001), (2.4, 1.4, 0.01), mat("rug", (0.3, 0.35, 0.5), 0.95))
        camera((-1.3, -0.9, 1.6), (0.8, 2.6, 0.6), 20)
    elif scene_name == "bathroom":
        window(1.8, 2.1, 1.0, 0.8)
        tile = mat("walltile", (0.92, 0.95, 0.96), 0.15); porc = mat("porcelain", (0.97, 0.97, 0.97), 0.1); chrome = mat("chrome", (0.8, 0.8, 0.82), 0.1, metal=1.0)
        box((0, 3.97, 0.6), (8, 0.04, 1.2), tile)
        box((-2.2, 3.0, 0.3), (3.2, 1.5, 0.6), porc); box((-2.2, 3.0, 0.58), (2.9, 1.2, 0.06), mat("water", (0.6, 0.75, 0.8), 0.05))
        cyl((-3.4, 3.6, 1.2), 0.04, 1.2, chrome)
        box((1.0, 3.75, 0.45), (1.2, 0.5, 0.9), wood("vanity", (0.45, 0.3, 0.2))); box((1.0, 3.7, 0.93), (1.0, 0.45, 0.06), porc)
        box((1.0, 3.95, 1.7), (0.9, 0.04, 0.9), mat("mirror", (0.9, 0.9, 0.9), 0.02, metal=1.0))
        cyl((1.0, 3.85, 1.0), 0.03, 0.2, chrome)
        box((3.2, 3.4, 0.2), (0.45, 0.6, 0.4), porc); box((3.2, 3.72, 0.6), (0.45, 0.18, 0.45), porc)
        box((2.2, 2.0, 0.002), (1.0, 0.6, 0.01), mat("bathmat", (0.3, 0.55, 0.6), 0.95))
        box((-0.3, 3.96, 1.3), (0.6, 0.04, 0.5), mat("towel", (0.85, 0.45, 0.3), 0.95))
        camera((1.3, -1.3, 1.6), (-0.6, 2.8, 0.7), 20)
    elif scene_name == "study":
        window(-1.6, 1.8, 1.4, 1.4)
        shelf = wood("bookcase", (0.4, 0.25, 0.15))
        box((2.4, 3.75, 1.1), (2.2, 0.4, 2.2), shelf)
        for k, z in enumerate((0.35, 0.9, 1.45, 2.0)):
            for j in range(9):
                col = [(0.6, 0.1, 0.1), (0.1, 0.2, 0.5), (0.15, 0.4, 0.2), (0.8, 0.7, 0.3), (0.3, 0.2, 0.1)][(j + k) % 5]
                box((1.5 + j * 0.22, 3.6, z + 0.18), (0.16, 0.25, 0.36 + 0.04 * ((j * 3 + k) % 3)), mat("book%d%d" % (k, j), col, 0.7))
        box((-0.6, 2.9, 0.75), (2.0, 0.9, 0.06), wood("desk", (0.55, 0.38, 0.22)))
        for tx in (-1.5, 0.3):
            for ty in (2.55, 3.25): box((tx, ty, 0.37), (0.06, 0.06, 0.74), wood("leg", (0.55, 0.38, 0.22)))
        box((-0.6, 3.2, 1.05), (0.8, 0.05, 0.5), mat("screen", (0.05, 0.05, 0.07), 0.2))
        cyl((0.2, 2.8, 0.95), 0.08, 0.35, mat("lamp", (0.2, 0.2, 0.2), 0.3)); cyl((0.2, 2.8, 1.15), 0.18, 0.2, mat("shade", (0.9, 0.85, 0.7), 0.8), r2=0.1)
        box((-0.6, 1.9, 0.5), (0.55, 0.55, 0.08), mat("seat", (0.1, 0.1, 0.12), 0.6)); box((-0.6, 1.65, 0.9), (0.55, 0.08, 0.7), mat("seatback", (0.1, 0.1, 0.12), 0.6)); cyl((-0.6, 1.9, 0.25), 0.04, 0.5, mat("post", (0.3, 0.3, 0.3), 0.3, metal=1.0))
        box((-0.2, 1.3, 0.001), (3.0, 2.0, 0.01), mat("rug", (0.45, 0.15, 0.15), 0.95))
        camera((1.6, -1.2, 1.6), (-0.2, 2.7, 0.9), 20)
    elif scene_name == "kids_room":
        window(0.8, 1.8, 1.6, 1.2)
        bw = wood("bunk", (0.85, 0.7, 0.5))
        for bz in (0.45, 1.75):
            box((-2.6, 2.6, bz), (2.2, 1.0, 0.12), bw); box((-2.6, 2.6, bz + 0.14), (2.0, 0.9, 0.16), mat("mattress%d" % int(bz * 10), (0.3, 0.55, 0.85) if bz < 1 else (0.9, 0.35, 0.3), 0.9))
        for lx in (-3.65, -1.55):
            for ly in (2.15, 3.05): box((lx, ly, 1.2), (0.08, 0.08, 2.4), bw)
        box((-1.45, 2.1, 1.2), (0.06, 0.06, 2.2), bw)
        box((1.4, 3.5, 0.3), (1.2, 0.6, 0.6), mat("toybox", (0.2, 0.65, 0.35), 0.5))
        sphere((1.0, 2.8, 0.25), 0.25, mat("ball", (0.95, 0.8, 0.1), 0.3))
        box((3.2, 2.5, 0.9), (0.9, 0.4, 1.8), mat("wardrobe", (0.95, 0.95, 0.92), 0.4))
        cyl((0.3, 1.0, 0.005), 1.4, 0.01, mat("rug", (0.55, 0.75, 0.9), 0.95))
        box((2.2, 1.2, 0.35), (0.9, 0.6, 0.05), bw); box((2.2, 1.2, 0.17), (0.8, 0.5, 0.34), bw)
        camera((1.8, -1.4, 1.7), (-0.6, 2.5, 0.8), 20)
    elif scene_name == "entrance_hall":
        window(-2.2, 2.3, 0.6, 0.9)
        door = wood("door", (0.45, 0.25, 0.12))
        box((0.2, 3.97, 1.05), (1.0, 0.06, 2.1), door); cyl((0.6, 3.9, 1.0), 0.04, 0.12, mat("knob", (0.8, 0.65, 0.2), 0.2, metal=1.0)).rotation_euler = (math.pi / 2, 0, 0)
        box((-3.8, 1.8, 1.3), (0.05, 0.8, 1.1), mat("mirror", (0.9, 0.92, 0.95), 0.02, metal=1.0))
        box((-3.6, 1.8, 0.45), (0.5, 1.6, 0.06), wood("bench", (0.6, 0.42, 0.25))); box((-3.6, 1.8, 0.22), (0.45, 1.5, 0.44), wood("benchbase", (0.55, 0.38, 0.22)))
        box((3.9, 2.0, 1.8), (0.12, 1.6, 0.08), wood("rack", (0.4, 0.25, 0.12)))
        for i, c in enumerate([(0.2, 0.25, 0.5), (0.6, 0.15, 0.1), (0.3, 0.3, 0.3)]): box((3.75, 1.5 + i * 0.5, 1.35), (0.25, 0.4, 0.9), mat("coat%d" % i, c, 0.9))
        for i in range(3): box((2.6 + i * 0.35, 3.4, 0.06), (0.22, 0.5, 0.12), mat("shoe%d" % i, (0.1, 0.08, 0.05) if i != 1 else (0.7, 0.1, 0.1), 0.4))
        box((0.2, 2.8, 0.005), (1.6, 1.0, 0.01), mat("doormat", (0.5, 0.35, 0.2), 0.95))
        cyl((-1.5, 3.6, 0.35), 0.2, 0.7, mat("umbrellastand", (0.2, 0.3, 0.25), 0.4))
        camera((1.2, -1.4, 1.6), (-0.4, 2.6, 1.0), 20)
    elif scene_name == "dining_room":
        window(-2.0, 1.7, 1.4, 1.6); window(1.2, 1.7, 1.4, 1.6)
        tw = wood("table", (0.35, 0.2, 0.1))
        box((0, 1.8, 0.75), (2.6, 1.1, 0.06), tw)
        for tx in (-1.2, 1.2):
            for ty in (1.35, 2.25): box((tx, ty, 0.37), (0.07, 0.07, 0.74), tw)
        box((0, 1.8, 0.785), (2.3, 0.4, 0.01), mat("runner", (0.85, 0.8, 0.65), 0.9))
        for cx in (-0.8, 0.0, 0.8):
            for cy, by in ((0.95, 0.75), (2.65, 2.85)):
                box((cx, cy, 0.45), (0.45, 0.45, 0.05), tw); box((cx, by, 0.8), (0.45, 0.05, 0.7), tw)
                for lx in (-0.18, 0.18):
                    for ly in (-0.18, 0.18): box((cx + lx, cy + ly, 0.22), (0.04, 0.04, 0.44), tw)
        for px in (-0.8, 0.0, 0.8):
            for py in (1.45, 2.15): cyl((px, py, 0.79), 0.14, 0.02, mat("plate", (0.97, 0.97, 0.97), 0.2))
        cyl((0, 1.8, 0.9), 0.1, 0.2, mat("vase", (0.2, 0.35, 0.6), 0.2)); sphere((0, 1.8, 1.1), 0.18, mat("flowers", (0.9, 0.3, 0.4), 0.8))
        cyl((0, 1.8, 2.6), 0.02, 0.8, mat("cord", (0.1, 0.1, 0.1), 0.5)); cyl((0, 1.8, 2.1), 0.35, 0.3, mat("pendant", (0.9, 0.75, 0.4), 0.3, metal=0.5), r2=0.1)
        box((3.4, 3.6, 0.5), (1.2, 0.5, 1.0), tw)
        camera((1.8, -1.4, 1.7), (-0.3, 2.0, 0.7), 20)
    else:
        window(0.5, 1.9, 1.8, 1.1)
        cab = mat("cabinet", (0.2, 0.35, 0.3), 0.4); top = mat("worktop", (0.85, 0.85, 0.82), 0.2)
        box((0, 3.7, 0.45), (6.0, 0.6, 0.9), cab); box((0, 3.7, 0.92), (6.1, 0.65, 0.05), top)
        box((-2.2, 3.82, 2.3), (1.8, 0.35, 0.8), cab); box((2.6, 3.82, 2.3), (1.8, 0.35, 0.8), cab)
        box((0.5, 3.6, 0.93), (0.8, 0.45, 0.03), mat("sink", (0.7, 0.72, 0.75), 0.2, metal=1.0))
        box((-3.7, 2.0, 1.0), (0.7, 0.8, 2.0), mat("fridge", (0.85, 0.86, 0.88), 0.25, metal=0.6))
        box((0.3, 1.2, 0.75), (1.6, 0.9, 0.05), wood("table", (0.55, 0.38, 0.22)))
        for tx in (-0.4, 1.0):
            for ty in (0.85, 1.55): box((tx, ty, 0.36), (0.06, 0.06, 0.72), wood("leg", (0.55, 0.38, 0.22)))
        for cx in (-0.3, 0.9): box((cx, 0.4, 0.45), (0.45, 0.45, 0.05), wood("chair", (0.4, 0.25, 0.15))); box((cx, 0.2, 0.75), (0.45, 0.05, 0.6), wood("chairback", (0.4, 0.25, 0.15)))
        cyl((0.3, 1.2, 0.85), 0.12, 0.16, mat("bowl", (0.9, 0.5, 0.1), 0.3)); sphere((-1.6, 3.7, 1.05), 0.1, mat("kettle", (0.8, 0.1, 0.1), 0.2), scale=(1.2, 1.2, 1))
        camera((1.6, -1.3, 1.6), (-0.4, 2.6, 0.9), 20)
s.render.filepath = out
bpy.ops.render.render(write_still=True)
