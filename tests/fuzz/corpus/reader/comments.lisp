; comment
#| block #| nested |# |# x