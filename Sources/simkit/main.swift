import SimKit
print("simkit")
