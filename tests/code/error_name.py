# functions: add
# An unknown name. A host function is declared, so under cella an unknown
# name is not taken for a host function (with none declared, every unknown
# name would be one).
x = 1
total = x + undefined_variable
# expect-error: NameError: name 'undefined_variable' is not defined
